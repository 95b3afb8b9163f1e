#include "exports.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

namespace tcheck {

namespace {

// The file is untrusted input: every offset is checked against its size.
bool within(const std::string &file, uint64_t offset, uint64_t size) {
  return offset <= file.size() && size <= file.size() - offset;
}

template <class T>
bool read_at(const std::string &file, uint64_t offset, T *out) {
  if (!within(file, offset, sizeof *out)) return false;
  memcpy(out, file.data() + offset, sizeof *out);
  return true;
}

bool is_entry_symbol(const std::string &name) {
  return name.rfind("smd_transport_plugin_v", 0) == 0;
}

// Symbols the linker itself may add to any shared object.
bool is_linker_symbol(const std::string &name) {
  return name == "_init" || name == "_fini" || name == "_edata" || name == "_end" ||
         name == "__bss_start";
}

}  // namespace

bool extra_exports(const std::string &path, std::vector<std::string> *names, std::string *error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read the file";
    return false;
  }
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Elf64_Ehdr eh;
  if (!read_at(file, 0, &eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    *error = "not an ELF file";
    return false;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr)) {
    *error = "not a 64-bit ELF file";
    return false;
  }
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh, strtab;
    if (!read_at(file, eh.e_shoff + uint64_t(i) * sizeof sh, &sh)) break;
    if (sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_entsize != sizeof(Elf64_Sym) || !within(file, sh.sh_offset, sh.sh_size) ||
        !read_at(file, eh.e_shoff + uint64_t(sh.sh_link) * sizeof strtab, &strtab) ||
        !within(file, strtab.sh_offset, strtab.sh_size)) {
      *error = "malformed dynamic symbol table";
      return false;
    }
    // Entry 0 is the null symbol.
    for (uint64_t k = 1; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      read_at(file, sh.sh_offset + k * sizeof sym, &sym);
      unsigned bind = ELF64_ST_BIND(sym.st_info);
      bool visible = ELF64_ST_VISIBILITY(sym.st_other) == STV_DEFAULT ||
                     ELF64_ST_VISIBILITY(sym.st_other) == STV_PROTECTED;
      if (sym.st_shndx == SHN_UNDEF || !visible ||
          (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE))
        continue;
      if (sym.st_name >= strtab.sh_size) continue;
      const char *start = file.data() + strtab.sh_offset + sym.st_name;
      std::string name(start, strnlen(start, strtab.sh_size - sym.st_name));
      if (!name.empty() && !is_entry_symbol(name) && !is_linker_symbol(name))
        names->push_back(name);
    }
    return true;
  }
  *error = "no dynamic symbol table";
  return false;
}

}  // namespace tcheck
