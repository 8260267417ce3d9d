/* toggle: toggle.qpspec line for line (see that file). ./pan -a [-f] -N finishes (weak fairness with -f), or
 * ./pan -a -f -N finishes_strong: weak fairness of both processes (-f) and strong fairness of the worker as an LTL
 * assumption SF(1): the worker, enabled infinitely often, moves infinitely often (enabled() and _last need
 * -DNOREDUCE). */
#define SF(p) ([]<> enabled(p) -> []<> (_last == p))

bool flag = false;
bool done = false;

active proctype toggler() {   /* pid 0 */
end_flip:
  flag = !flag;
  goto end_flip
}

active proctype worker() {    /* pid 1 */
  atomic { flag -> done = true }
}

ltl finishes { <> done }
ltl finishes_strong { SF(1) -> <> done }
