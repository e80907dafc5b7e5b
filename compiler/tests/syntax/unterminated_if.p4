#ifdef FEATURE
const bit<8> X = 1;
#else
const bit<8> X = 2;
