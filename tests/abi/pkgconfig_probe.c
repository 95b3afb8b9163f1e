/* Built by pkgconfig_link.py with only the flags smd.pc gives: prints the
 * library's version as major.minor.patch. */
#include <smd.h>
#include <stdio.h>

int main(void) {
  int major = -1, minor = -1, patch = -1;
  if (smd_get_version(&major, &minor, &patch) != SMD_SUCCESS) return 1;
  printf("%d.%d.%d\n", major, minor, patch);
  return 0;
}
