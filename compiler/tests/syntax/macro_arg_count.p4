// A function-like macro used with the wrong number of arguments.
#define MAX(a, b) ((a) > (b) ? (a) : (b))
const bit<8> M = MAX(1, 2, 3);
