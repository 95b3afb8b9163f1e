// header_alone.c, compiled as C++.
#include "header_alone.c"
