/* rnr_livelock: rnr_livelock.qpspec line for line (see that file). spin -DRNR_RETRY=7 -DREPOST=0 -a rnr_livelock.pml;
 * ./pan -a [-f] (weak fairness of every process with -f). No strong-fairness formula: SPIN's LTL translation of
 * the three SF conjuncts it would need takes minutes (README.md). */
#ifndef RNR_RETRY
#define RNR_RETRY 7
#endif
#ifndef REPOST
#define REPOST 0
#endif

byte sq = 0;
byte budget = RNR_RETRY;
bool nak = false;
byte rq = 1;
byte rcvd = 0;
bool posted = false;

active proctype requester() {   /* pid 0 */
  sq = sq + 1;
  sq = sq + 1;
  posted = true;
end_wait:
  atomic { nak ->
    nak = false;
    if
    :: budget == 0 -> sq = 0
    :: else -> if :: budget < 7 -> budget = budget - 1 :: else -> skip fi
    fi
  };
  goto end_wait
}

active proctype responder() {   /* pid 1 */
  atomic { rcvd > 0 -> rcvd = rcvd - 1 };
end_stopped:
  atomic { REPOST -> rq = rq + 1 };
end_serving:
  atomic { rcvd > 0 -> rcvd = rcvd - 1 }
}

active proctype fabric() {      /* pid 2 */
end_idle:
  atomic { sq > 0 && !nak ->
    if
    :: rq > 0 -> rq = rq - 1; rcvd = rcvd + 1; sq = sq - 1; budget = RNR_RETRY
    :: else -> nak = true
    fi
  };
  goto end_idle
}

ltl sends_complete { <> (posted && sq == 0) }
