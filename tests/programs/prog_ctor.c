/* prog_ctor: linked with lib_ctor_marks, whose constructor records 25 marks before main. */
#include <stdint.h>

#include "profinject/profinject.h"

int ctor_marks_linked(void);

int main(void)
{
    PROFINJECT_MARK("main", 0);
    return ctor_marks_linked() ? 0 : 1;
}
