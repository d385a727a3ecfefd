/* lib_next_b: the next definition of pi_next_value after lib_next_a's. */
int pi_next_value(void)
{
    return 2;
}
