#include <core.p4>
#include "does_not_exist.p4"
