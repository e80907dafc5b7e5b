#include "inc/cycle_b.p4"
