/* prog_dlsym_next: prints what dlsym(RTLD_NEXT) finds from lib_next_a: 2, lib_next_b's. */
#include <stdio.h>

int pi_next_value_after_a(void);

int main(void)
{
    printf("%d\n", pi_next_value_after_a());
    return 0;
}
