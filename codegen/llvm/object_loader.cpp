// kiln's loader of kernel objects (object_loader.h). The layout of one
// loaded object, in pages of its own (read-write while it is built, then
// read-only and executable):
//
//   [allocated sections, each at its alignment][GOT: 8 bytes per symbol][stubs: 8 bytes per external]
//
// A stub is `jmp *GOT[sym](%rip)`: a call (R_X86_64_PLT32) whose target is
// further than 2 GiB away (libm, the twins in the executable) goes through
// it, as JITLink's stubs do. Every read of the object is bounds-checked: a
// malformed object is refused, never followed.
#include "codegen/llvm/object_loader.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace kiln::codegen::llvmcg {

namespace {

// Reads T at byte offset `off` of the object (false when it does not fit).
template <class T>
bool read(std::string_view obj, uint64_t off, T* out) {
  if (off > obj.size() || obj.size() - off < sizeof(T)) return false;
  std::memcpy(out, obj.data() + off, sizeof(T));
  return true;
}

bool fits_i32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

class Loader {
 public:
  Loader(std::string_view obj, const SymbolResolver& resolve, std::string* why)
      : obj_(obj), resolve_(resolve), why_(why) {}
  ~Loader() {
    if (base_ && !keep_) ::munmap(base_, size_);
  }
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  void* load(std::string_view symbol) {
    if (!headers() || !layout() || !map() || !symbols() || !relocate()) return nullptr;
    void* entry = find(symbol);
    if (!entry) return nullptr;
    if (::mprotect(base_, size_, PROT_READ | PROT_EXEC) != 0) return bad("mprotect failed"), nullptr;
    keep_ = true;
    return entry;
  }

  // The size in bytes of global function `symbol` (its symbol's st_size), or 0.
  uint64_t function_size(std::string_view symbol) {
    if (!headers()) return 0;
    for (size_t i = 1; i < nsyms_; ++i) {
      Elf64_Sym sym;
      if (!this->symbol(i, &sym)) return 0;
      if (ELF64_ST_BIND(sym.st_info) != STB_LOCAL && ELF64_ST_TYPE(sym.st_info) == STT_FUNC &&
          name_of(sym) == symbol)
        return sym.st_size;
    }
    return 0;
  }

 private:
  bool bad(std::string what) {
    *why_ = std::move(what);
    return false;
  }

  bool headers() {
    if (!read(obj_, 0, &eh_)) return bad("shorter than an ELF header");
    if (std::memcmp(eh_.e_ident, ELFMAG, SELFMAG) != 0 || eh_.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh_.e_ident[EI_DATA] != ELFDATA2LSB || eh_.e_type != ET_REL || eh_.e_machine != EM_X86_64)
      return bad("not a relocatable x86-64 ELF object");
    if (eh_.e_shentsize != sizeof(Elf64_Shdr) || eh_.e_shnum == 0 || eh_.e_shnum >= SHN_LORESERVE)
      return bad("unexpected section header table");
    sh_.resize(eh_.e_shnum);
    for (size_t i = 0; i < sh_.size(); ++i)
      if (!read(obj_, eh_.e_shoff + i * sizeof(Elf64_Shdr), &sh_[i])) return bad("truncated section headers");
    for (size_t i = 0; i < sh_.size(); ++i)
      if (sh_[i].sh_type == SHT_SYMTAB) {
        if (symtab_) return bad("two symbol tables");
        symtab_ = i;
      }
    if (!symtab_) return bad("no symbol table");
    const Elf64_Shdr& st = sh_[symtab_];
    if (st.sh_entsize != sizeof(Elf64_Sym) || st.sh_link >= sh_.size())
      return bad("unexpected symbol table");
    if (st.sh_offset > obj_.size() || obj_.size() - st.sh_offset < st.sh_size) return bad("truncated symbols");
    nsyms_ = st.sh_size / sizeof(Elf64_Sym);
    const Elf64_Shdr& str = sh_[st.sh_link];
    if (str.sh_offset > obj_.size() || obj_.size() - str.sh_offset < str.sh_size)
      return bad("truncated string table");
    strtab_ = obj_.substr(str.sh_offset, str.sh_size);
    return true;
  }

  // Where each allocated section goes; the GOT and the stubs after them.
  bool layout() {
    place_.assign(sh_.size(), kNotLoaded);
    uint64_t at = 0;
    for (size_t i = 0; i < sh_.size(); ++i) {
      const Elf64_Shdr& s = sh_[i];
      if (!(s.sh_flags & SHF_ALLOC)) continue;
      // Unwind tables and notes: a kernel never unwinds (nothing throws
      // through it), so they are not loaded.
      if (s.sh_type == SHT_NOTE || s.sh_type == SHT_X86_64_UNWIND) continue;
      if (s.sh_flags & (SHF_WRITE | SHF_TLS)) return bad("a writable or thread-local section");
      if (s.sh_type != SHT_PROGBITS && s.sh_type != SHT_NOBITS)
        return bad("a section of type " + std::to_string(s.sh_type));
      const uint64_t align = std::max<uint64_t>(s.sh_addralign, 1);
      if (align > 4096 || (align & (align - 1))) return bad("a section alignment of " + std::to_string(align));
      if (s.sh_size > (uint64_t{1} << 30)) return bad("a section over 1 GiB");
      if (s.sh_type == SHT_PROGBITS && (s.sh_offset > obj_.size() || obj_.size() - s.sh_offset < s.sh_size))
        return bad("a truncated section");
      at = (at + align - 1) & ~(align - 1);
      place_[i] = at;
      at += s.sh_size;
    }
    got_ = (at + 7) & ~uint64_t{7};
    stubs_ = got_ + 8 * nsyms_;
    size_ = stubs_ + 8 * nsyms_;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    size_ = (std::max<uint64_t>(size_, 1) + page - 1) & ~(page - 1);
    return true;
  }

  bool map() {
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return bad("mmap failed");
    base_ = static_cast<char*>(p);
    for (size_t i = 0; i < sh_.size(); ++i)
      if (place_[i] != kNotLoaded && sh_[i].sh_type == SHT_PROGBITS)
        std::memcpy(base_ + place_[i], obj_.data() + sh_[i].sh_offset, sh_[i].sh_size);
    return true;
  }

  bool symbol(size_t i, Elf64_Sym* sym) {
    return read(obj_, sh_[symtab_].sh_offset + i * sizeof(Elf64_Sym), sym) || bad("truncated symbols");
  }

  std::string_view name_of(const Elf64_Sym& sym) const {
    if (sym.st_name >= strtab_.size()) return {};
    const std::string_view rest = strtab_.substr(sym.st_name);
    return rest.substr(0, rest.find('\0'));
  }

  // Each symbol's address (0: not loaded, an error only if a relocation
  // uses it), its GOT entry, and a stub for each external one.
  bool symbols() {
    addr_.assign(nsyms_, 0);
    have_.assign(nsyms_, false);
    for (size_t i = 1; i < nsyms_; ++i) {
      Elf64_Sym sym;
      if (!symbol(i, &sym)) return false;
      uint64_t a = 0;
      if (sym.st_shndx == SHN_UNDEF) {
        const std::string_view name = name_of(sym);
        void* p = name.empty() ? nullptr : resolve_(name);
        if (!p) return bad("unresolved symbol " + std::string(name));
        a = reinterpret_cast<uint64_t>(p);
        // jmp *GOT(%rip): ff 25 rel32, padded with int3
        char* stub = base_ + stubs_ + 8 * i;
        const int64_t rel = static_cast<int64_t>(got_ + 8 * i) - static_cast<int64_t>(stubs_ + 8 * i + 6);
        const int32_t rel32 = static_cast<int32_t>(rel);
        const unsigned char op[2] = {0xff, 0x25};
        std::memcpy(stub, op, 2);
        std::memcpy(stub + 2, &rel32, 4);
        std::memset(stub + 6, 0xcc, 2);
      } else if (sym.st_shndx == SHN_ABS) {
        a = sym.st_value;
      } else if (sym.st_shndx < sh_.size() && place_[sym.st_shndx] != kNotLoaded) {
        a = reinterpret_cast<uint64_t>(base_ + place_[sym.st_shndx]) + sym.st_value;
      } else if (sym.st_shndx >= SHN_LORESERVE) {
        return bad("a common or special symbol");
      }
      addr_[i] = a;
      have_[i] = sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS ||
                 (sym.st_shndx < sh_.size() && place_[sym.st_shndx] != kNotLoaded);
      std::memcpy(base_ + got_ + 8 * i, &a, 8);
    }
    return true;
  }

  bool relocate() {
    for (const Elf64_Shdr& rs : sh_) {
      if (rs.sh_type != SHT_RELA && rs.sh_type != SHT_REL) continue;
      if (rs.sh_info >= sh_.size() || place_[rs.sh_info] == kNotLoaded) continue;  // of a section not loaded
      if (rs.sh_type == SHT_REL) return bad("relocations without addends");
      if (rs.sh_link != symtab_ || rs.sh_entsize != sizeof(Elf64_Rela)) return bad("unexpected relocations");
      const Elf64_Shdr& target = sh_[rs.sh_info];
      for (uint64_t k = 0; k < rs.sh_size / sizeof(Elf64_Rela); ++k) {
        Elf64_Rela r;
        if (!read(obj_, rs.sh_offset + k * sizeof(Elf64_Rela), &r)) return bad("truncated relocations");
        if (!apply(r, target, place_[rs.sh_info])) return false;
      }
    }
    return true;
  }

  bool apply(const Elf64_Rela& r, const Elf64_Shdr& target, uint64_t at) {
    const uint32_t type = ELF64_R_TYPE(r.r_info);
    const uint64_t i = ELF64_R_SYM(r.r_info);
    if (type == R_X86_64_NONE) return true;
    const uint64_t width = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
    if (i >= nsyms_ || r.r_offset > target.sh_size || target.sh_size - r.r_offset < width)
      return bad("a relocation out of range");
    if (target.sh_type == SHT_NOBITS) return bad("a relocation in an empty section");
    if (i != 0 && !have_[i]) return bad("a relocation against a section not loaded");
    char* p = base_ + at + r.r_offset;
    const int64_t P = reinterpret_cast<int64_t>(p), S = static_cast<int64_t>(addr_[i]), A = r.r_addend;
    auto put32 = [&](int64_t v) {
      if (!fits_i32(v)) return bad("a 32-bit relocation out of reach");
      const int32_t v32 = static_cast<int32_t>(v);
      std::memcpy(p, &v32, 4);
      return true;
    };
    switch (type) {
      case R_X86_64_64: {
        const uint64_t v = static_cast<uint64_t>(S + A);
        std::memcpy(p, &v, 8);
        return true;
      }
      case R_X86_64_PC64: {
        const int64_t v = S + A - P;
        std::memcpy(p, &v, 8);
        return true;
      }
      case R_X86_64_PC32:
        return put32(S + A - P);
      case R_X86_64_PLT32: {
        if (fits_i32(S + A - P)) return put32(S + A - P);
        Elf64_Sym sym;
        if (!symbol(i, &sym) || sym.st_shndx != SHN_UNDEF) return bad("a call out of reach");
        return put32(reinterpret_cast<int64_t>(base_ + stubs_ + 8 * i) + A - P);
      }
      case R_X86_64_GOTPCREL:
      case R_X86_64_GOTPCRELX:
      case R_X86_64_REX_GOTPCRELX:
        return put32(reinterpret_cast<int64_t>(base_ + got_ + 8 * i) + A - P);
      default:
        return bad("relocation type " + std::to_string(type));
    }
  }

  void* find(std::string_view symbol_name) {
    for (size_t i = 1; i < nsyms_; ++i) {
      Elf64_Sym sym;
      if (!symbol(i, &sym)) return nullptr;
      const unsigned bind = ELF64_ST_BIND(sym.st_info), type = ELF64_ST_TYPE(sym.st_info);
      if (bind == STB_LOCAL || type != STT_FUNC || name_of(sym) != symbol_name) continue;
      if (!have_[i] || sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS ||
          !(sh_[sym.st_shndx].sh_flags & SHF_EXECINSTR))
        return bad("the kernel's symbol is not in its code"), nullptr;
      return reinterpret_cast<void*>(addr_[i]);
    }
    return bad("no function " + std::string(symbol_name)), nullptr;
  }

  static constexpr uint64_t kNotLoaded = std::numeric_limits<uint64_t>::max();

  std::string_view obj_;
  const SymbolResolver& resolve_;
  std::string* why_;
  Elf64_Ehdr eh_{};
  std::vector<Elf64_Shdr> sh_;
  size_t symtab_ = 0;
  uint64_t nsyms_ = 0;
  std::string_view strtab_;
  std::vector<uint64_t> place_;  // each section's offset in the mapping, or kNotLoaded
  std::vector<uint64_t> addr_;   // each symbol's address
  std::vector<bool> have_;       // whether it has one (defined in a loaded section, absolute or resolved)
  uint64_t got_ = 0, stubs_ = 0, size_ = 0;
  char* base_ = nullptr;
  bool keep_ = false;
};

}  // namespace

void* load_kernel_object(std::string_view object, std::string_view symbol, const SymbolResolver& resolve,
                         std::string* why) {
  std::string ignored;
  return Loader(object, resolve, why ? why : &ignored).load(symbol);
}

uint64_t object_function_size(std::string_view object, std::string_view symbol) {
  std::string ignored;
  const SymbolResolver none;
  return Loader(object, none, &ignored).function_size(symbol);
}

}  // namespace kiln::codegen::llvmcg
