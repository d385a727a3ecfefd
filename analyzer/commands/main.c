/*
 * main.c - `profinject-analyze`: dispatch to one subcommand per file.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: profinject-analyze [COMMAND] [ARGS]\n"
            "\n"
            "commands:\n"
            "  report [options] FILE|DIR...   the report (default command); --help for options\n"
            "  compare BASE NEW [--threshold p95=10%%]...   regression check, exit 3 if worse\n"
            "  info FILE|DIR...   header, process tree, record counts, losses, time span\n"
            "  dump FILE...       every record as text, header first\n"
            "  partial FILE -o OUT   one file's pass, for merge (a rank a task: Slurm, Dask, Spark)\n"
            "  merge [options] DIR|PARTIAL...   the report of partials: the same as report's\n"
            "\n"
            "Trace files are written by LD_PRELOAD=libprofinject.so into ./profinject-traces\n"
            "(or $PROFINJECT_OUTPUT). Exit status: 0 ok, 1 usage, 2 unreadable input.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? PI_EXIT_USAGE : PI_EXIT_OK;
    }
    if (strcmp(argv[1], "dump") == 0)
        return pi_cmd_dump(argc - 2, argv + 2);
    if (strcmp(argv[1], "info") == 0)
        return pi_cmd_info(argc - 2, argv + 2);
    if (strcmp(argv[1], "report") == 0)
        return pi_cmd_report(argc - 2, argv + 2);
    if (strcmp(argv[1], "partial") == 0)
        return pi_cmd_partial(argc - 2, argv + 2);
    if (strcmp(argv[1], "merge") == 0)
        return pi_cmd_merge(argc - 2, argv + 2);
    if (strcmp(argv[1], "compare") == 0)
        return pi_cmd_compare(argc - 2, argv + 2);
    return pi_cmd_report(argc - 1, argv + 1);
}
