#if 1
const bit<8> X = 1;
#else
const bit<8> X = 2;
#else
const bit<8> X = 3;
#endif
