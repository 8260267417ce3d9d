/* phil_starvation: phil_starvation.qpspec line for line (see that file). spin -DN=3 -a phil_starvation.pml;
 * ./pan -a [-f] -N p0_eats (or p0_hungry_eats, someone_eats; weak fairness with -f), or ./pan -a -f -N p0_eats_strong
 * (p0_hungry_eats_strong, someone_eats_strong): strong fairness of every philosopher as an LTL assumption
 * SF(0) && SF(1), written for N = 2 only (SPIN's LTL translation of three SF conjuncts takes minutes: README.md).
 * The counter `eating` is the qpspec's too: LTL cannot quantify over the philosophers. */
#ifndef N
#define N 3
#endif
#define SF(p) ([]<> enabled(p) -> []<> (_last == p))

bool fork[N];
byte eating = 0;
#define FIRST(i)  ((i) == N-1 -> ((i)+1)%N : (i))
#define SECOND(i) ((i) == N-1 -> (i) : ((i)+1)%N)

active [N] proctype phil() {
think:
  atomic { !fork[FIRST(_pid)] -> fork[FIRST(_pid)] = true };
one:
  atomic { !fork[SECOND(_pid)] -> fork[SECOND(_pid)] = true; eating = eating + 1 };
eat:
  atomic { fork[FIRST(_pid)] = false; fork[SECOND(_pid)] = false; eating = eating - 1 };
  goto think
}

ltl p0_eats { []<> phil[0]@eat }
ltl p0_hungry_eats { [] (phil[0]@one -> <> phil[0]@eat) }
ltl someone_eats { []<> (eating > 0) }
#if N == 2
ltl p0_eats_strong { (SF(0) && SF(1)) -> []<> phil[0]@eat }
ltl p0_hungry_eats_strong { (SF(0) && SF(1)) -> [] (phil[0]@one -> <> phil[0]@eat) }
ltl someone_eats_strong { (SF(0) && SF(1)) -> []<> (eating > 0) }
#endif
