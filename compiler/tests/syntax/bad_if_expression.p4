#if VERSION >= (2 +
const bit<8> X = 1;
#endif
