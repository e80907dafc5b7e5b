#ifndef GUARD_ELSE
#define GUARD_ELSE
const bit<8> FIRST = 1;
#else
const bit<8> AGAIN = 2;
#endif
