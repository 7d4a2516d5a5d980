// libnvtxpp_audit.so: the no-rebuild route (docs/annotate.md). Loaded by the dynamic linker as
// an auditor (LD_AUDIT, rtld-audit(7)); NVTXPP_ANNOTATE_CALLS="FUNC@LIB,..." names the calls
// that become NVTX ranges, one per call, in a domain named after the library.
//
// How: la_objopen marks every object LA_FLG_BINDTO and every object but the tools
// LA_FLG_BINDFROM, so la_symbind64 sees each lazy binding of one object's PLT entry to a symbol
// of another. Symbols that match a rule get the PLT enter/exit hooks; all others get
// LA_SYMB_NOPLTENTER|NOPLTEXIT and their GOT slot written (bind_directly: no cost per call
// afterwards). la_x86_64_gnu_pltenter pushes the range and asks for pltexit with a copy of
// `frame_size` bytes of stack arguments; la_x86_64_gnu_pltexit pops it.
//
// NVTX: this library runs in the auditors' own link namespace, where an NVTX copy would load a
// second copy of the tool (NVTX_INJECTION64_PATH) that the program never sees. Instead the same
// file is loaded once more into the program's namespace (dlmopen(LM_ID_BASE)), and its
// nvtxpp_audit_* functions, whose NVTX calls load and reach the program's own tool, are called
// through pointers. Calls made while this thread is inside such a call get no range (no
// recursion when the tool itself calls an annotated function).
//
// Unwinding (an exception or longjmp through an annotated call) skips pltexit: each thread keeps
// a shadow stack of the stack pointers its open ranges were entered with, and the next annotated
// call or return on that thread first pops the ranges whose frames are gone.
#include "../common/annotate_spec.hpp"
#include "symbols.hpp"  // function_name(): demangled, no return type or parameters

#include <nvtxpp/color.hpp>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#define NVTXPP_EXPORT extern "C" __attribute__((visibility("default")))

// ---------------------------------------------------------------------------------------------
// The program-namespace side: NVTX calls, reached through pointers from the auditor's side.

NVTXPP_EXPORT void* nvtxpp_audit_domain(char const* name) { return nvtxDomainCreateA(name); }

NVTXPP_EXPORT void* nvtxpp_audit_register(void* domain, char const* name) {
  return nvtxDomainRegisterStringA(static_cast<nvtxDomainHandle_t>(domain), name);
}

NVTXPP_EXPORT void nvtxpp_audit_push(void* domain, void* name, std::uint32_t argb) {
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = argb;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = static_cast<nvtxStringHandle_t>(name);
  nvtxDomainRangePushEx(static_cast<nvtxDomainHandle_t>(domain), &attr);
}

NVTXPP_EXPORT void nvtxpp_audit_pop(void* domain) {
  nvtxDomainRangePop(static_cast<nvtxDomainHandle_t>(domain));
}

// ---------------------------------------------------------------------------------------------
// The auditor's side. Addresses from the dynamic linker (cookies, dynamic-section entries, GOT
// slots) are integers that become pointers here by nature.
// NOLINTBEGIN(performance-no-int-to-ptr)

namespace {

using nvtxpp::capture::call_rule;
using nvtxpp::capture::glob_match;

struct object_info {
  std::string file;                    // file name without directory
  std::string soname;                  // DT_SONAME, or ""
  std::string domain;                  // the range domain: soname, else file name
  std::vector<std::string> functions;  // globs of the rules whose library matches
  link_map* map = nullptr;
  std::mutex lock;  // guards domain_handle's creation and the GOT index
  std::atomic<void*> domain_handle{nullptr};
  bool got_indexed = false;
  std::unordered_map<std::string_view, ElfW(Addr)*> got;  // PLT symbol name -> its GOT slot
};

/// One annotated function (by address).
struct function_info {
  std::uintptr_t address = 0;
  object_info* object = nullptr;
  std::string name;
  std::uint32_t argb = 0;
  std::atomic<void*> name_handle{nullptr};
};

struct config {
  std::vector<call_rule> rules;
  std::string self;                // this library's path
  std::vector<std::string> tools;  // NVTX_INJECTION64_PATH, CUDA_INJECTION64_PATH: never callers
  long frame_size = 1024;          // bytes of stack arguments copied for pltexit
  bool verbose = false;
};

config& cfg() {
  static config* c = new config;  // never destroyed: calls may come during exit
  return *c;
}

// Annotated functions by address: open addressing, filled by la_symbind64. A slot is one
// pointer, published whole by a CAS, so a reader never sees a key without its data (other
// threads' calls may reach pltenter while the first binding is still in la_symbind64).
constexpr std::size_t table_size = 4096;
std::atomic<function_info*> g_table[table_size];

std::size_t hash_of(std::uintptr_t a) {
  return static_cast<std::size_t>((a * 0x9E3779B97F4A7C15ULL) >> 52) & (table_size - 1);
}

function_info* find(std::uintptr_t addr) {
  std::size_t i = hash_of(addr);
  for (std::size_t n = 0; n < table_size; ++n, i = (i + 1) & (table_size - 1)) {
    function_info* f = g_table[i].load(std::memory_order_acquire);
    if (f == nullptr || f->address == addr) {
      return f;
    }
  }
  return nullptr;
}

void insert(std::uintptr_t addr, object_info* object, char const* name) {
  if (find(addr) != nullptr) {
    return;  // bound before (another caller, or another thread)
  }
  auto* f = new function_info;
  f->address = addr;
  f->object = object;
  f->name = name;
  f->argb = nvtxpp::auto_color(f->name).argb();
  std::size_t i = hash_of(addr);
  for (std::size_t n = 0; n < table_size; ++n, i = (i + 1) & (table_size - 1)) {
    function_info* expected = nullptr;
    if (g_table[i].compare_exchange_strong(expected, f, std::memory_order_acq_rel)) {
      return;
    }
    if (expected->address == addr) {
      delete f;  // another thread bound it at the same time
      return;
    }
  }
  delete f;
  std::fprintf(stderr, "nvtxpp audit: more than %zu annotated functions; %s has no range\n",
               table_size, name);
}

// The program-namespace NVTX entry points.
struct nvtx_api {
  void* (*domain)(char const*) = nullptr;
  void* (*reg)(void*, char const*) = nullptr;
  void (*push)(void*, void*, std::uint32_t) = nullptr;
  void (*pop)(void*) = nullptr;
};
nvtx_api g_api;
std::atomic<int> g_api_state{0};  // 0 not loaded, 1 ready, 2 failed
std::mutex g_api_lock;

bool api_ready() {
  int const s = g_api_state.load(std::memory_order_acquire);
  if (s != 0) {
    return s == 1;
  }
  std::lock_guard<std::mutex> hold{g_api_lock};
  if (g_api_state.load(std::memory_order_relaxed) == 0) {
    void* h = ::dlmopen(LM_ID_BASE, cfg().self.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      g_api.domain = reinterpret_cast<void* (*)(char const*)>(::dlsym(h, "nvtxpp_audit_domain"));
      g_api.reg =
          reinterpret_cast<void* (*)(void*, char const*)>(::dlsym(h, "nvtxpp_audit_register"));
      g_api.push =
          reinterpret_cast<void (*)(void*, void*, std::uint32_t)>(::dlsym(h, "nvtxpp_audit_push"));
      g_api.pop = reinterpret_cast<void (*)(void*)>(::dlsym(h, "nvtxpp_audit_pop"));
    }
    bool const ok = g_api.domain != nullptr && g_api.reg != nullptr && g_api.push != nullptr &&
                    g_api.pop != nullptr;
    if (!ok) {
      std::fprintf(stderr,
                   "nvtxpp audit: cannot load %s into the program's namespace (%s); "
                   "no ranges are recorded\n",
                   cfg().self.c_str(), ::dlerror());
    }
    g_api_state.store(ok ? 1 : 2, std::memory_order_release);
  }
  return g_api_state.load(std::memory_order_relaxed) == 1;
}

/// The function's domain and registered name, made at its first call.
void handles(function_info& f, void*& domain, void*& name) {
  object_info& o = *f.object;
  domain = o.domain_handle.load(std::memory_order_acquire);
  if (domain == nullptr) {
    std::lock_guard<std::mutex> hold{o.lock};
    domain = o.domain_handle.load(std::memory_order_relaxed);
    if (domain == nullptr) {
      domain = g_api.domain(o.domain.c_str());
      o.domain_handle.store(domain, std::memory_order_release);
    }
  }
  name = f.name_handle.load(std::memory_order_acquire);
  if (name == nullptr) {
    name = g_api.reg(domain, f.name.c_str());  // a second registration returns the same handle
    f.name_handle.store(name, std::memory_order_release);
  }
}

// Per-thread shadow stack of the ranges opened by annotated calls.
constexpr unsigned max_depth = 128;
struct open_call {
  std::uint64_t rsp;  // the caller's stack pointer at the call (the return address's slot)
  void* domain;
};
struct thread_state {
  open_call calls[max_depth];
  unsigned depth;
  bool busy;
};
thread_local thread_state t_state;

void pop_top(thread_state& t) {
  --t.depth;
  g_api.pop(t.calls[t.depth].domain);
}

std::string soname_of(link_map const* map) {
  char const* strtab = nullptr;
  ElfW(Xword) soname = 0;
  bool has_soname = false;
  for (ElfW(Dyn) const* d = map->l_ld; d != nullptr && d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_STRTAB) {
      // Relocated in place by the dynamic linker on most targets; an unrelocated one is small.
      ElfW(Addr) a = d->d_un.d_ptr;
      if (a < map->l_addr) {
        a += map->l_addr;
      }
      strtab = reinterpret_cast<char const*>(a);
    } else if (d->d_tag == DT_SONAME) {
      soname = d->d_un.d_val;
      has_soname = true;
    }
  }
  return strtab != nullptr && has_soname ? std::string{strtab + soname} : std::string{};
}

/// A dynamic-section address: relocated in place by the dynamic linker on most targets; an
/// unrelocated one (an offset) is below the load address.
ElfW(Addr) dyn_address(link_map const* map, ElfW(Addr) a) {
  return a < map->l_addr ? a + map->l_addr : a;
}

/// Sends the calls of @p o's PLT entry for @p symname straight to @p value from now on. With
/// an auditor that has PLT hooks, glibc routes every lazily bound call of a LA_FLG_BINDFROM
/// object through its profiling trampoline (about 15 ns a call here), even for symbols whose
/// la_symbind64 declined the hooks. Writing the GOT slot, as plain lazy binding does, makes the
/// functions not asked for cost nothing after their first call. Objects bound at load time
/// (BIND_NOW) have no trampoline to skip: nothing is done for them.
void bind_directly(object_info& o, char const* symname, ElfW(Addr) value) {
  std::lock_guard<std::mutex> hold{o.lock};
  if (!o.got_indexed) {
    o.got_indexed = true;
    link_map const* m = o.map;
    ElfW(Rela) const* rel = nullptr;
    std::size_t rel_size = 0;
    ElfW(Sym) const* symtab = nullptr;
    char const* strtab = nullptr;
    bool rela = true;
    bool now = false;
    for (ElfW(Dyn) const* d = m != nullptr ? m->l_ld : nullptr; d != nullptr && d->d_tag != DT_NULL;
         ++d) {
      switch (d->d_tag) {
        case DT_JMPREL:
          rel = reinterpret_cast<ElfW(Rela) const*>(dyn_address(m, d->d_un.d_ptr));
          break;
        case DT_PLTRELSZ:
          rel_size = d->d_un.d_val;
          break;
        case DT_SYMTAB:
          symtab = reinterpret_cast<ElfW(Sym) const*>(dyn_address(m, d->d_un.d_ptr));
          break;
        case DT_STRTAB:
          strtab = reinterpret_cast<char const*>(dyn_address(m, d->d_un.d_ptr));
          break;
        case DT_PLTREL:
          rela = d->d_un.d_val == DT_RELA;
          break;
        case DT_BIND_NOW:
          now = true;
          break;
        case DT_FLAGS:
          now = now || (d->d_un.d_val & DF_BIND_NOW) != 0;
          break;
        case DT_FLAGS_1:
          now = now || (d->d_un.d_val & DF_1_NOW) != 0;
          break;
        default:
          break;
      }
    }
    if (rel != nullptr && symtab != nullptr && strtab != nullptr && rela && !now) {
      for (std::size_t i = 0; i < rel_size / sizeof(ElfW(Rela)); ++i) {
        if (ELF64_R_TYPE(rel[i].r_info) != R_X86_64_JUMP_SLOT) {
          continue;
        }
        char const* name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
        o.got.emplace(name, reinterpret_cast<ElfW(Addr)*>(m->l_addr + rel[i].r_offset));
      }
    }
  }
  if (auto it = o.got.find(symname); it != o.got.end()) {
    __atomic_store_n(it->second, value, __ATOMIC_RELEASE);
  }
}

std::string base_name(char const* path) {
  char const* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

bool same_file(std::string const& a, std::string const& b) {
  if (a == b) {
    return true;
  }
  char ra[4096], rb[4096];
  return ::realpath(a.c_str(), ra) != nullptr && ::realpath(b.c_str(), rb) != nullptr &&
         std::strcmp(ra, rb) == 0;
}

}  // namespace

NVTXPP_EXPORT unsigned int la_version(unsigned int version) {
  config& c = cfg();
  if (char const* spec = std::getenv("NVTXPP_ANNOTATE_CALLS"); spec != nullptr) {
    std::string error;
    c.rules = nvtxpp::capture::parse_call_rules(spec, &error);
    if (c.rules.empty()) {
      std::fprintf(stderr, "nvtxpp audit: NVTXPP_ANNOTATE_CALLS: %s\n", error.c_str());
    }
  }
  if (char const* v = std::getenv("NVTXPP_ANNOTATE_FRAME_SIZE"); v != nullptr && *v != '\0') {
    long const n = std::strtol(v, nullptr, 10);
    if (n >= 0) {
      c.frame_size = (n + 15) / 16 * 16;
    }
  }
  char const* verbose = std::getenv("NVTXPP_ANNOTATE_VERBOSE");
  c.verbose = verbose != nullptr && verbose[0] == '1';
  Dl_info self{};
  if (::dladdr(reinterpret_cast<void*>(&la_version), &self) != 0 && self.dli_fname != nullptr) {
    c.self = self.dli_fname;
  }
  for (char const* var : {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"}) {
    if (char const* v = std::getenv(var); v != nullptr && *v != '\0') {
      c.tools.emplace_back(v);
    }
  }
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

NVTXPP_EXPORT unsigned int la_objopen(link_map* map, Lmid_t /*lmid*/, uintptr_t* cookie) {
  config const& c = cfg();
  *cookie = 0;
  if (c.rules.empty() || map->l_name == nullptr) {
    return 0;
  }
  std::string const path = map->l_name;
  // This library (loaded again into the program's namespace) and the tools are no callers.
  if (!path.empty() && same_file(path, c.self)) {
    return 0;
  }
  bool tool = false;
  for (auto const& t : c.tools) {
    tool = tool || (!path.empty() && same_file(path, t));
  }
  auto* o = new object_info;
  o->file = path.empty() ? std::string{} : base_name(path.c_str());
  o->soname = path.empty() ? std::string{} : soname_of(map);
  o->domain = o->soname.empty() ? o->file : o->soname;
  for (auto const& r : c.rules) {
    bool const lib = (!o->file.empty() && glob_match(r.library.c_str(), o->file.c_str())) ||
                     (!o->soname.empty() && glob_match(r.library.c_str(), o->soname.c_str()));
    if (lib) {
      o->functions.push_back(r.function);
    }
  }
  o->map = map;
  *cookie = reinterpret_cast<uintptr_t>(o);
  // BINDTO on every object: la_symbind64 then sees each binding, and binds the ones not asked
  // for directly (bind_directly).
  unsigned const flags = LA_FLG_BINDTO | (tool ? 0U : unsigned{LA_FLG_BINDFROM});
  if (!o->functions.empty() && c.verbose) {
    std::fprintf(stderr, "nvtxpp audit: annotating calls into %s\n", path.c_str());
  }
  return flags;
}

NVTXPP_EXPORT uintptr_t la_symbind64(Elf64_Sym* sym, unsigned int /*ndx*/, uintptr_t* refcook,
                                     uintptr_t* defcook, unsigned int* flags, char const* symname) {
  auto* def = reinterpret_cast<object_info*>(*defcook);
  bool want = def != nullptr && *refcook != *defcook && ELF64_ST_TYPE(sym->st_info) != STT_OBJECT;
  std::string name;
  if (want) {
    // C++ names match mangled or as ranges show them ("ann::thrower").
    name = nvtxpp::instrument::function_name(symname);
    want = false;
    for (auto const& g : def->functions) {
      want = want || glob_match(g.c_str(), symname) || glob_match(g.c_str(), name.c_str());
    }
  }
  if (!want) {
    *flags |= LA_SYMB_NOPLTENTER | LA_SYMB_NOPLTEXIT;
    if (auto* ref = reinterpret_cast<object_info*>(*refcook);
        ref != nullptr && (*flags & LA_SYMB_DLSYM) == 0) {
      bind_directly(*ref, symname, sym->st_value);
    }
    return sym->st_value;
  }
  if (cfg().verbose) {
    std::fprintf(stderr, "nvtxpp audit: %s %s in %s\n",
                 (*flags & LA_SYMB_DLSYM) != 0 ? "dlsym of (no range: no PLT call)" : "binding",
                 name.c_str(), def->domain.c_str());
  }
  insert(sym->st_value, def, name.c_str());
  return sym->st_value;
}

NVTXPP_EXPORT ElfW(Addr)
    la_x86_64_gnu_pltenter(ElfW(Sym) * sym, unsigned int /*ndx*/, uintptr_t* /*refcook*/,
                           uintptr_t* /*defcook*/, La_x86_64_regs* regs, unsigned int* /*flags*/,
                           char const* /*symname*/, long int* framesizep) {
  thread_state& t = t_state;
  if (t.busy) {
    return sym->st_value;
  }
  function_info* f = find(sym->st_value);
  if (f == nullptr) {
    return sym->st_value;
  }
  t.busy = true;
  if (api_ready()) {
    // Open calls entered at this stack pointer or below it (as deep or deeper) cannot be this
    // call's callers: they were left by unwinding (exception, longjmp) without their pltexit.
    while (t.depth > 0 && t.calls[t.depth - 1].rsp <= regs->lr_rsp) {
      pop_top(t);
    }
    if (t.depth < max_depth) {
      void* domain = nullptr;
      void* name = nullptr;
      handles(*f, domain, name);
      t.calls[t.depth++] = {regs->lr_rsp, domain};
      g_api.push(domain, name, f->argb);
      *framesizep = cfg().frame_size;  // asks for pltexit
    }
  }
  t.busy = false;
  return sym->st_value;
}

NVTXPP_EXPORT unsigned int la_x86_64_gnu_pltexit(ElfW(Sym) * /*sym*/, unsigned int /*ndx*/,
                                                 uintptr_t* /*refcook*/, uintptr_t* /*defcook*/,
                                                 La_x86_64_regs const* inregs,
                                                 La_x86_64_retval* /*outregs*/,
                                                 char const* /*symname*/) {
  thread_state& t = t_state;
  if (t.busy || g_api_state.load(std::memory_order_acquire) != 1) {
    return 0;
  }
  t.busy = true;
  while (t.depth > 0 && t.calls[t.depth - 1].rsp < inregs->lr_rsp) {
    pop_top(t);
  }
  if (t.depth > 0 && t.calls[t.depth - 1].rsp == inregs->lr_rsp) {
    pop_top(t);
  }
  t.busy = false;
  return 0;
}
// NOLINTEND(performance-no-int-to-ptr)
