const bit<8> X = 1;
/* this comment
   never ends
const bit<8> Y = 2;
