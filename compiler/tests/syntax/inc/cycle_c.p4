#include "cycle_b.p4"
