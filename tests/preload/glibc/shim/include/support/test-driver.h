/* libbravo shim: see shim.h.  */
#include <support/shim.h>
