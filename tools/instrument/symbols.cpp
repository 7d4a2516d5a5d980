// Function symbols of the loaded objects, read from their ELF files: .symtab holds the static,
// inline, template, lambda and member functions that dladdr (which sees .dynsym only) misses.
#include "symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

namespace nvtxpp::instrument {
namespace {

struct function_symbol {
  std::uintptr_t start = 0;  // run-time address
  std::uintptr_t size = 0;
  std::uint32_t name = 0;  // offset in the module's string table
};

/// One loaded object: its address range, and its function symbols once read.
struct module {
  std::string path;  // as the loader names it ("" for the executable: /proc/self/exe)
  std::string file;  // file name without directory
  std::uintptr_t base = 0;
  std::uintptr_t lo = 0, hi = 0;  // PT_LOAD extent, run-time addresses
  bool read = false;
  std::vector<function_symbol> symbols;  // sorted by start
  std::vector<char> strings;             // the symbol table's string table, copied
};

std::vector<std::unique_ptr<module>>& modules() {
  static std::vector<std::unique_ptr<module>> all;
  return all;
}

int add_module(dl_phdr_info* info, std::size_t, void* data) {
  auto& all = *static_cast<std::vector<std::unique_ptr<module>>*>(data);
  auto m = std::make_unique<module>();
  m->path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  m->base = info->dlpi_addr;
  m->lo = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    ElfW(Phdr) const& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD) {
      m->lo = std::min<std::uintptr_t>(m->lo, m->base + ph.p_vaddr);
      m->hi = std::max<std::uintptr_t>(m->hi, m->base + ph.p_vaddr + ph.p_memsz);
    }
  }
  if (m->lo == UINTPTR_MAX) {
    return 0;
  }
  std::string file_path = m->path;
  if (file_path.empty() && all.empty()) {
    char buf[4096];
    ssize_t const n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    file_path = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
    m->path = "/proc/self/exe";
  }
  m->file = file_path.substr(file_path.find_last_of('/') + 1);
  all.push_back(std::move(m));
  return 0;
}

void list_modules() {
  auto& all = modules();
  all.clear();
  ::dl_iterate_phdr(&add_module, &all);
}

/// Reads the function symbols of @p m: .symtab when the file has one, else .dynsym.
void read_symbols(module& m) {
  m.read = true;
  if (m.path.empty()) {
    return;  // the vDSO: no file
  }
  int const fd = ::open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(ElfW(Ehdr)))) {
    ::close(fd);
    return;
  }
  auto const size = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    return;
  }
  auto const* bytes = static_cast<unsigned char const*>(map);
  auto const* eh = static_cast<ElfW(Ehdr) const*>(map);
  bool const ok = std::equal(bytes, bytes + SELFMAG, ELFMAG) && eh->e_shoff != 0 &&
                  eh->e_shentsize == sizeof(ElfW(Shdr)) &&
                  eh->e_shoff + std::size_t{eh->e_shnum} * sizeof(ElfW(Shdr)) <= size;
  if (ok) {
    auto const* sh = reinterpret_cast<ElfW(Shdr) const*>(bytes + eh->e_shoff);
    ElfW(Shdr) const* table = nullptr;
    for (unsigned want : {unsigned{SHT_SYMTAB}, unsigned{SHT_DYNSYM}}) {
      for (unsigned i = 0; i < eh->e_shnum && table == nullptr; ++i) {
        if (sh[i].sh_type == want) {
          table = &sh[i];
        }
      }
      if (table != nullptr) {
        break;
      }
    }
    if (table != nullptr && table->sh_link < eh->e_shnum &&
        table->sh_offset + table->sh_size <= size) {
      ElfW(Shdr) const& strtab = sh[table->sh_link];
      if (strtab.sh_offset + strtab.sh_size <= size) {
        auto const* str = reinterpret_cast<char const*>(bytes + strtab.sh_offset);
        m.strings.assign(str, str + strtab.sh_size);
        m.strings.push_back('\0');
        // Executables that are not position-independent hold absolute addresses.
        std::uintptr_t const bias = eh->e_type == ET_EXEC ? 0 : m.base;
        auto const* sym = reinterpret_cast<ElfW(Sym) const*>(bytes + table->sh_offset);
        std::size_t const count = table->sh_size / sizeof(ElfW(Sym));
        for (std::size_t i = 0; i < count; ++i) {
          unsigned const type = ELF64_ST_TYPE(sym[i].st_info);
          if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym[i].st_value == 0 ||
              sym[i].st_shndx == SHN_UNDEF || sym[i].st_name >= strtab.sh_size) {
            continue;
          }
          m.symbols.push_back({bias + sym[i].st_value, sym[i].st_size, sym[i].st_name});
        }
        std::sort(m.symbols.begin(), m.symbols.end(),
                  [](function_symbol const& a, function_symbol const& b) {
                    return a.start < b.start || (a.start == b.start && a.size > b.size);
                  });
      }
    }
  }
  ::munmap(map, size);
}

module* module_of(std::uintptr_t addr) {
  for (auto& m : modules()) {
    if (addr >= m->lo && addr < m->hi) {
      return m.get();
    }
  }
  return nullptr;
}

}  // namespace

symbol_info lookup_symbol(std::uintptr_t addr) {
  module* m = module_of(addr);
  if (m == nullptr) {
    list_modules();  // loaded since the last listing (dlopen)
    m = module_of(addr);
  }
  symbol_info out;
  if (m != nullptr) {
    out.module = m->file;
    if (!m->read) {
      read_symbols(*m);
    }
    auto const& syms = m->symbols;
    auto it =
        std::upper_bound(syms.begin(), syms.end(), addr,
                         [](std::uintptr_t a, function_symbol const& s) { return a < s.start; });
    if (it != syms.begin()) {
      --it;
      // The entry hook passes the function's own address: an exact match, or inside it.
      if (it->start == addr || addr < it->start + it->size) {
        out.name = function_name(m->strings.data() + it->name);
        return out;
      }
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
  out.name = buf;
  return out;
}

void reset_symbols() { modules().clear(); }

}  // namespace nvtxpp::instrument
