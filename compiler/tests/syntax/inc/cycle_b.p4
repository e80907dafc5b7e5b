// no include guard on purpose
#include "cycle_c.p4"
