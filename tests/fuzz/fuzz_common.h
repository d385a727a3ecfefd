/* fuzz_common.h - what both fuzz targets run on a trace in a memory file. */
#ifndef PI_FUZZ_COMMON_H
#define PI_FUZZ_COMMON_H

/* pi_fuzz_analyse_fd - dump, then every report of the analyzer, on the file behind @fd */
void pi_fuzz_analyse_fd(int fd);

#endif
