/* A public header (SMD_TEST_HEADER, set by meson.build) compiled on its
 * own, first and twice, with a use of its one-line macros: the build fails
 * if the header needs another include, breaks its include guard, or warns
 * under -pedantic -Wall -Wextra -Werror. Also built as C++ (header_alone.cc). */
#include SMD_TEST_HEADER
#include SMD_TEST_HEADER

#if defined(SMD_H)
static int probe(void) {
  smd_init_options_t options = SMD_INIT_OPTIONS_INIT;
  return options.struct_size == sizeof options && options.rank == -1 ? 0 : 1;
}
#elif defined(SMD_TRANSPORT_H)
static int probe(void) {
  static smd_transport_v1_t table;
  table.struct_size = sizeof table;
  return SMD_TRANSPORT_HAS(&table, smd_transport_v1_t, segment_release) ? 0 : 1;
}
#else
#error "SMD_TEST_HEADER is not a public smd header"
#endif

int main(void) { return probe(); }
