#define MAX(a, b) ((a) > (b) ? (a) : (b))
const bit<8> M = MAX(1, 2);
