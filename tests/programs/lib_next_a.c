/* lib_next_a: defines pi_next_value and asks dlsym(RTLD_NEXT) for the next definition. */
#include <dlfcn.h>

int pi_next_value(void)
{
    return 1;
}

int pi_next_value_after_a(void)
{
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "pi_next_value");
    return next ? next() : -1;
}
