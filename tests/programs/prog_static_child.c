/* prog_static_child: statically linked, so no preload can enter it; prints and exits 6. */
#include <stdio.h>

int main(void)
{
    printf("static ok\n");
    return 6;
}
