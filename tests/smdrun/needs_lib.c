/* A rank program that needs a shared library found only through its
   build-tree runpath ($ORIGIN-relative): a copy elsewhere cannot start. */
int smdrun_test_lib_answer(void);

int main(void) { return smdrun_test_lib_answer() == 42 ? 0 : 1; }
