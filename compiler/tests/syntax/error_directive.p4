#ifndef TARGET
#error TARGET must be defined (use -D TARGET=...)
#endif
