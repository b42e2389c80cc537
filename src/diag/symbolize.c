/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.c - naming code addresses for the profile's report
 * (symbolize.h), with no allocation and no lock.
 *
 * An address is found in /proc/self/maps (streamed through a fixed
 * buffer), its object file is mapped read-only, the address becomes a
 * virtual address of the file through the PT_LOAD segment its mapping
 * maps, the function comes from .symtab (else .dynsym) and the line from
 * the DWARF line programs of .debug_line.  A separate debug file (by
 * build-id, then by .gnu_debuglink) stands in for a missing .symtab or
 * .debug_line.
 *
 * Invariants:
 * - Nothing here allocates or takes a lock: the only calls are open, read,
 *   fstat, mmap, munmap, close, getpagesize and string functions.  Memory is
 *   static (the object table, the maps buffer, the path buffers) but for
 *   each object's index of line-table units, an anonymous mapping.  Stack
 *   frames stay small: the report may run at exit called from a signal
 *   handler, on an alternate signal stack, over a malloc or a dlopen of
 *   the same thread.
 * - Every byte of a file is read through a view that knows its bounds
 *   (struct bytes, struct cursor): a truncated or malformed file names
 *   less, never faults.  Every loop over file data consumes at least one
 *   byte a turn or is bounded by a count checked against the data's size.
 * - A file is used only if it is a 64-bit ELF of this host's byte order;
 *   a file whose inode differs from the one mapped (replaced since) is not.
 * - objects[] holds every file mapped (and its unit index), from its first
 *   use to symbolizer_close, which unmaps them all; a full table evicts in
 *   turn.  An object whose file cannot be used stays in the table, so it
 *   is tried once.
 * - Silent: nothing is printed; what cannot be named stays empty.
 */
#include "symbolize.h"

#include "demangle.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- text into fixed buffers ---- */

/* Append at most n bytes of src to dst (size bytes, NUL-terminated), cutting what does not fit. */
static void text_append_n(char *dst, size_t size, const char *src, size_t n)
{
	size_t len = strnlen(dst, size);

	if (len + 1 >= size)
		return;
	n = strnlen(src, n < size - len - 1 ? n : size - len - 1);
	memcpy(dst + len, src, n);
	dst[len + n] = '\0';
}

static void text_append(char *dst, size_t size, const char *src)
{
	text_append_n(dst, size, src, size);
}

static void text_copy(char *dst, size_t size, const char *src)
{
	if (size == 0)
		return;
	dst[0] = '\0';
	text_append(dst, size, src);
}

/* Append the bytes as lower-case hex. */
static void text_append_hex(char *dst, size_t size, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char pair[3] = { 0 };

	for (size_t i = 0; i < n; i++) {
		pair[0] = digits[p[i] >> 4];
		pair[1] = digits[p[i] & 15];
		text_append(dst, size, pair);
	}
}

/* ---- bounded views of mapped files ---- */

/* Bytes inside a mapped file; size 0 (p NULL) when absent. */
struct bytes {
	const unsigned char *p;
	size_t size;
};

static bool bytes_sub(struct bytes whole, uint64_t off, uint64_t size, struct bytes *out)
{
	if (off > whole.size || size > whole.size - off)
		return false;
	out->p = whole.p + off;
	out->size = (size_t)size;
	return true;
}

static bool bytes_read(struct bytes b, uint64_t off, void *dst, size_t size)
{
	if (off > b.size || size > b.size - off)
		return false;
	memcpy(dst, b.p + off, size);
	return true;
}

/* The NUL-terminated string at off, or NULL if it runs off the end. */
static const char *bytes_string(struct bytes b, uint64_t off)
{
	if (off >= b.size || !memchr(b.p + off, 0, b.size - off))
		return NULL;
	return (const char *)b.p + off;
}

/* ---- ELF files ---- */

/* A mapped 64-bit ELF file with its header checked. */
struct elf {
	struct bytes file;
	Elf64_Ehdr ehdr;
	uint64_t shnum; /* section headers that lie inside the file */
	struct bytes shstrtab;
};

static unsigned char host_data(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one ? ELFDATA2LSB : ELFDATA2MSB;
}

static bool section_header(const struct elf *e, uint64_t i, Elf64_Shdr *sh)
{
	return i < e->shnum && bytes_read(e->file, e->ehdr.e_shoff + i * sizeof(*sh), sh, sizeof(*sh));
}

/* A section's bytes: none if it has none in the file or they are compressed. */
static bool section_bytes(const struct elf *e, const Elf64_Shdr *sh, struct bytes *out)
{
	if (sh->sh_type == SHT_NOBITS || (sh->sh_flags & SHF_COMPRESSED))
		return false;
	return bytes_sub(e->file, sh->sh_offset, sh->sh_size, out);
}

/* The section count and the index of the names' section, escapes included. */
static void elf_section_table(struct elf *e)
{
	Elf64_Shdr first;
	uint64_t count = e->ehdr.e_shnum, names = e->ehdr.e_shstrndx;
	Elf64_Shdr sh;

	e->shnum = 0;
	if (e->ehdr.e_shoff == 0 || e->ehdr.e_shentsize != sizeof(Elf64_Shdr) ||
	    !bytes_read(e->file, e->ehdr.e_shoff, &first, sizeof(first)))
		return;
	if (count == 0)
		count = first.sh_size;
	if (names == SHN_XINDEX)
		names = first.sh_link;
	e->shnum = count < e->file.size / sizeof(Elf64_Shdr) ? count : e->file.size / sizeof(Elf64_Shdr);
	if (!section_header(e, names, &sh) || !section_bytes(e, &sh, &e->shstrtab))
		e->shstrtab = (struct bytes){ 0 };
}

static bool elf_parse(struct bytes file, struct elf *e)
{
	memset(e, 0, sizeof(*e));
	if (!bytes_read(file, 0, &e->ehdr, sizeof(e->ehdr)) ||
	    memcmp(e->ehdr.e_ident, ELFMAG, SELFMAG) != 0 ||
	    e->ehdr.e_ident[EI_CLASS] != ELFCLASS64 || e->ehdr.e_ident[EI_DATA] != host_data())
		return false;
	e->file = file;
	elf_section_table(e);
	return true;
}

/* The header of the first section called name (of any type but NOBITS). */
static bool section_named(const struct elf *e, const char *name, Elf64_Shdr *out)
{
	for (uint64_t i = 1; i < e->shnum; i++) {
		const char *s;

		if (!section_header(e, i, out) || out->sh_type == SHT_NOBITS)
			continue;
		s = bytes_string(e->shstrtab, out->sh_name);
		if (s && strcmp(s, name) == 0)
			return true;
	}
	return false;
}

static bool section_named_bytes(const struct elf *e, const char *name, struct bytes *out)
{
	Elf64_Shdr sh;

	return section_named(e, name, &sh) && section_bytes(e, &sh, out);
}

static bool program_header(const struct elf *e, uint64_t i, Elf64_Phdr *ph)
{
	return e->ehdr.e_phentsize == sizeof(*ph) && i < e->ehdr.e_phnum &&
	       bytes_read(e->file, e->ehdr.e_phoff + i * sizeof(*ph), ph, sizeof(*ph));
}

/*
 * The file's virtual address of an address of a mapping that maps this
 * file from offset map_offset at map_start.  Its PT_LOAD segment is the
 * one whose file bytes hold the address's file offset, preferring the one
 * the loader mapped at this mapping's offset (its p_offset rounded down to
 * a page), since two segments may share a page of the file.
 */
static bool file_vaddr(const struct elf *e, uintptr_t addr, uintptr_t map_start,
		       uintptr_t map_offset, uint64_t *vaddr)
{
	uint64_t page = (uint64_t)getpagesize();
	uint64_t f = (uint64_t)(addr - map_start) + map_offset;
	Elf64_Phdr ph;

	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; program_header(e, i, &ph); i++) {
			bool holds = ph.p_type == PT_LOAD && ph.p_offset <= f && f - ph.p_offset < ph.p_memsz;

			if (!holds || (pass == 0 && (ph.p_offset & ~(page - 1)) != map_offset))
				continue;
			*vaddr = f - ph.p_offset + ph.p_vaddr;
			return true;
		}
	}
	return false;
}

/* ---- notes: the build-id ---- */

/* The NT_GNU_BUILD_ID note's bytes in a run of notes aligned to align. */
static bool notes_build_id(struct bytes notes, uint64_t align, struct bytes *id)
{
	uint64_t off = 0;
	Elf64_Nhdr nh;

	align = align == 8 ? 8 : 4;
	while (bytes_read(notes, off, &nh, sizeof(nh))) {
		uint64_t name = off + sizeof(nh);
		uint64_t desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
		struct bytes n;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    bytes_sub(notes, name, 4, &n) && memcmp(n.p, "GNU", 4) == 0)
			return nh.n_descsz > 0 && bytes_sub(notes, desc, nh.n_descsz, id);
		off = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
	}
	return false;
}

/* The build-id, from the note sections, else from the PT_NOTE segments. */
static bool elf_build_id(const struct elf *e, struct bytes *id)
{
	Elf64_Shdr sh;
	Elf64_Phdr ph;
	struct bytes notes;

	for (uint64_t i = 1; section_header(e, i, &sh); i++)
		if (sh.sh_type == SHT_NOTE && section_bytes(e, &sh, &notes) &&
		    notes_build_id(notes, sh.sh_addralign, id))
			return true;
	for (uint64_t i = 0; program_header(e, i, &ph); i++)
		if (ph.p_type == PT_NOTE && bytes_sub(e->file, ph.p_offset, ph.p_filesz, &notes) &&
		    notes_build_id(notes, ph.p_align, id))
			return true;
	return false;
}

/* ---- symbols ---- */

/* A symbol table and its string table. */
struct symbols {
	struct bytes table, names;
};

static bool symbols_of_type(const struct elf *e, uint32_t type, struct symbols *out)
{
	Elf64_Shdr sh, strings;

	for (uint64_t i = 1; section_header(e, i, &sh); i++) {
		if (sh.sh_type != type || sh.sh_entsize != sizeof(Elf64_Sym))
			continue;
		if (section_bytes(e, &sh, &out->table) && section_header(e, sh.sh_link, &strings) &&
		    section_bytes(e, &strings, &out->names))
			return true;
	}
	*out = (struct symbols){ 0 };
	return false;
}

/* A function symbol as a candidate name. */
struct symbol_pick {
	const char *name;
	uint64_t start;
	int rank;
};

static bool is_function(const Elf64_Sym *s)
{
	unsigned type = ELF64_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF;
}

/* Among aliases: global before weak before local. */
static int binding_rank(const Elf64_Sym *s)
{
	switch (ELF64_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	default:
		return 1;
	}
}

/* Take s over *best if it starts closer below the address, or ranks higher at the same start. */
static void pick_better(struct symbol_pick *best, const Elf64_Sym *s, const char *name)
{
	int rank = binding_rank(s);

	if (!best->name || s->st_value > best->start ||
	    (s->st_value == best->start && rank > best->rank))
		*best = (struct symbol_pick){ name, s->st_value, rank };
}

/*
 * The function holding vaddr: a sized symbol whose [value, value + size)
 * holds it, else the closest function symbol of size 0 below it, if no
 * sized function ends between the two.
 */
static bool symbol_lookup(const struct symbols *syms, uint64_t vaddr, struct symbol_pick *out)
{
	struct symbol_pick sized = { 0 }, unsized = { 0 };
	uint64_t sized_end_below = 0;
	size_t n = syms->table.size / sizeof(Elf64_Sym);
	Elf64_Sym s;

	for (size_t i = 0; i < n && bytes_read(syms->table, i * sizeof(s), &s, sizeof(s)); i++) {
		const char *name;

		if (!is_function(&s) || s.st_value > vaddr || !(name = bytes_string(syms->names, s.st_name)) ||
		    !name[0])
			continue;
		if (s.st_size == 0)
			pick_better(&unsized, &s, name);
		else if (vaddr - s.st_value < s.st_size)
			pick_better(&sized, &s, name);
		else if (s.st_value + s.st_size > sized_end_below)
			sized_end_below = s.st_value + s.st_size;
	}
	if (sized.name)
		*out = sized;
	else if (unsized.name && unsized.start >= sized_end_below)
		*out = unsized;
	else
		return false;
	return true;
}

/* ---- DWARF: reading ---- */

/* The DWARF constants used (DWARF 5, section 7), named as the standard names them. */
enum {
	DW_LNS_copy = 1,
	DW_LNS_advance_pc = 2,
	DW_LNS_advance_line = 3,
	DW_LNS_set_file = 4,
	DW_LNS_const_add_pc = 8,
	DW_LNS_fixed_advance_pc = 9,
	DW_LNE_end_sequence = 1,
	DW_LNE_set_address = 2,
	DW_LNCT_path = 1,
	DW_LNCT_directory_index = 2,
	DW_FORM_block2 = 0x03,
	DW_FORM_block4 = 0x04,
	DW_FORM_data2 = 0x05,
	DW_FORM_data4 = 0x06,
	DW_FORM_data8 = 0x07,
	DW_FORM_string = 0x08,
	DW_FORM_block = 0x09,
	DW_FORM_block1 = 0x0a,
	DW_FORM_data1 = 0x0b,
	DW_FORM_flag = 0x0c,
	DW_FORM_sdata = 0x0d,
	DW_FORM_strp = 0x0e,
	DW_FORM_udata = 0x0f,
	DW_FORM_strx = 0x1a,
	DW_FORM_strp_sup = 0x1d,
	DW_FORM_data16 = 0x1e,
	DW_FORM_line_strp = 0x1f,
	DW_FORM_strx1 = 0x25,
	DW_FORM_strx2 = 0x26,
	DW_FORM_strx3 = 0x27,
	DW_FORM_strx4 = 0x28,
	DW_FORM_GNU_strp_alt = 0x1f21,
};

/* Reading forward through bytes; once bad, every read gives 0. */
struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static struct cursor cursor_of(struct bytes b)
{
	return (struct cursor){ b.p, b.p + b.size, b.p == NULL };
}

static size_t cursor_left(const struct cursor *c)
{
	return c->bad ? 0 : (size_t)(c->end - c->p);
}

/* The next n bytes, or NULL (and bad) if fewer are left. */
static const unsigned char *cursor_take(struct cursor *c, uint64_t n)
{
	const unsigned char *at = c->p;

	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return at;
}

/* An unsigned of n bytes (1, 2, 4 or 8) in the file's byte order, which is the host's. */
static uint64_t read_fixed(struct cursor *c, unsigned n)
{
	const unsigned char *at = cursor_take(c, n);
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64 = 0;

	if (!at)
		return 0;
	switch (n) {
	case 1:
		memcpy(&v8, at, 1);
		return v8;
	case 2:
		memcpy(&v16, at, 2);
		return v16;
	case 4:
		memcpy(&v32, at, 4);
		return v32;
	case 8:
		memcpy(&v64, at, 8);
		return v64;
	default:
		return 0;
	}
}

/* A LEB128 number, sign-extended if is_signed; 0 if the data ends inside it. */
static uint64_t read_leb(struct cursor *c, bool is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const unsigned char *b;

	while ((b = cursor_take(c, 1))) {
		if (shift < 64)
			v |= (uint64_t)(*b & 0x7f) << shift;
		shift += 7;
		if (!(*b & 0x80)) {
			if (is_signed && shift < 64 && (*b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return v;
		}
	}
	return 0;
}

static uint64_t read_uleb(struct cursor *c)
{
	return read_leb(c, false);
}

static int64_t read_sleb(struct cursor *c)
{
	return (int64_t)read_leb(c, true);
}

/* A NUL-terminated string in place, or NULL (and bad) if unterminated. */
static const char *read_string(struct cursor *c)
{
	const unsigned char *nul;
	const char *s = (const char *)c->p;

	if (c->bad || !(nul = memchr(c->p, 0, (size_t)(c->end - c->p)))) {
		c->bad = true;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

/* ---- DWARF: line program headers ---- */

/* The string sections a line table's forms refer to. */
struct dwarf_strings {
	struct bytes str, line_str;
};

/* One unit of .debug_line: its header's fields and where its parts are. */
struct line_unit {
	unsigned version;
	unsigned offset_size; /* 4, or 8 for 64-bit DWARF */
	uint8_t min_inst_length, max_ops, default_is_stmt, line_range, opcode_base;
	int8_t line_base;
	const unsigned char *opcode_lengths; /* opcode_base - 1 of them */
	struct cursor tables;                /* directories and files */
	struct cursor program;               /* the line-number program */
};

/* The header fields after the header length, through the standard opcode lengths. */
static void line_unit_fields(struct cursor *h, struct line_unit *u)
{
	u->min_inst_length = (uint8_t)read_fixed(h, 1);
	u->max_ops = u->version >= 4 ? (uint8_t)read_fixed(h, 1) : 1;
	if (u->max_ops == 0)
		u->max_ops = 1;
	u->default_is_stmt = (uint8_t)read_fixed(h, 1);
	u->line_base = (int8_t)read_fixed(h, 1);
	u->line_range = (uint8_t)read_fixed(h, 1);
	u->opcode_base = (uint8_t)read_fixed(h, 1);
	u->opcode_lengths = u->opcode_base ? cursor_take(h, u->opcode_base - 1u) : NULL;
	if (u->line_range == 0 || u->opcode_base == 0)
		h->bad = true;
}

/*
 * The unit at *all; *all moves past it.  false: no more units (the end,
 * or a length that cannot be trusted).  *usable: a version and header
 * this code reads.
 */
static bool line_unit_next(struct cursor *all, struct line_unit *u, bool *usable)
{
	uint64_t length = read_fixed(all, 4), header_length;
	struct cursor unit, h;

	memset(u, 0, sizeof(*u));
	u->offset_size = 4;
	if (length == 0xffffffff) {
		length = read_fixed(all, 8);
		u->offset_size = 8;
	} else if (length >= 0xfffffff0) {
		return false;
	}
	unit.p = cursor_take(all, length);
	if (!unit.p)
		return false;
	unit.end = unit.p + length;
	unit.bad = false;
	*usable = false;
	u->version = (unsigned)read_fixed(&unit, 2);
	if (u->version < 2 || u->version > 5)
		return true;
	if (u->version >= 5)
		cursor_take(&unit, 2); /* address_size, segment_selector_size */
	header_length = read_fixed(&unit, u->offset_size);
	h.p = cursor_take(&unit, header_length);
	h.end = h.p ? h.p + header_length : NULL;
	h.bad = h.p == NULL;
	line_unit_fields(&h, u);
	u->tables = h;
	u->program = unit;
	*usable = !h.bad && !unit.bad;
	return true;
}

/* ---- DWARF: directory and file tables ---- */

/* A value of a form of a v5 entry: a string (NULL if not readable) or a number. */
struct form_value {
	const char *string;
	uint64_t number;
};

/* Read one value of form; a form this code cannot size makes c bad. */
static void read_form(struct cursor *c, uint64_t form, const struct line_unit *u,
		      const struct dwarf_strings *strings, struct form_value *v)
{
	*v = (struct form_value){ 0 };
	switch (form) {
	case DW_FORM_string:
		v->string = read_string(c);
		break;
	case DW_FORM_line_strp:
		v->string = bytes_string(strings->line_str, read_fixed(c, u->offset_size));
		break;
	case DW_FORM_strp:
		v->string = bytes_string(strings->str, read_fixed(c, u->offset_size));
		break;
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_strp_alt:
		read_fixed(c, u->offset_size); /* in a supplementary file: not read */
		break;
	case DW_FORM_udata:
	case DW_FORM_strx:
		v->number = read_uleb(c);
		break;
	case DW_FORM_sdata:
		v->number = (uint64_t)read_sleb(c);
		break;
	case DW_FORM_data1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
		v->number = read_fixed(c, 1);
		break;
	case DW_FORM_data2:
	case DW_FORM_strx2:
		v->number = read_fixed(c, 2);
		break;
	case DW_FORM_strx3:
		cursor_take(c, 3);
		break;
	case DW_FORM_data4:
	case DW_FORM_strx4:
		v->number = read_fixed(c, 4);
		break;
	case DW_FORM_data8:
		v->number = read_fixed(c, 8);
		break;
	case DW_FORM_data16:
		cursor_take(c, 16);
		break;
	case DW_FORM_block:
		cursor_take(c, read_uleb(c));
		break;
	case DW_FORM_block1:
		cursor_take(c, read_fixed(c, 1));
		break;
	case DW_FORM_block2:
		cursor_take(c, read_fixed(c, 2));
		break;
	case DW_FORM_block4:
		cursor_take(c, read_fixed(c, 4));
		break;
	default:
		c->bad = true;
	}
}

/* The entry formats of a v5 directory or file table. */
struct entry_formats {
	struct cursor pairs; /* (content type, form) pairs, as ULEB128s */
	unsigned count;
};

/* A v5 table's formats and entry count; c moves to its first entry. */
static uint64_t read_formats(struct cursor *c, struct entry_formats *f)
{
	f->count = (unsigned)read_fixed(c, 1);
	f->pairs = *c;
	for (unsigned i = 0; i < 2 * f->count; i++)
		read_uleb(c);
	return read_uleb(c);
}

/* What a line table says of a file or a directory. */
struct line_entry {
	const char *path;
	uint64_t dir;
};

/* One v5 entry.  With no formats it would take no bytes: that is bad too. */
static void read_entry(struct cursor *c, const struct entry_formats *f, const struct line_unit *u,
		       const struct dwarf_strings *strings, struct line_entry *out)
{
	struct cursor pairs = f->pairs;
	struct form_value v;

	*out = (struct line_entry){ 0 };
	if (f->count == 0)
		c->bad = true;
	for (unsigned i = 0; i < f->count && !c->bad; i++) {
		uint64_t type = read_uleb(&pairs), form = read_uleb(&pairs);

		read_form(c, form, u, strings, &v);
		if (type == DW_LNCT_path)
			out->path = v.string;
		else if (type == DW_LNCT_directory_index)
			out->dir = v.number;
	}
}

/* Entry index of a v5 table whose first entry is at c (count of them). */
static bool v5_entry(struct cursor c, const struct entry_formats *f, uint64_t count, uint64_t index,
		     const struct line_unit *u, const struct dwarf_strings *strings,
		     struct line_entry *out)
{
	if (index >= count)
		return false;
	for (uint64_t i = 0; i <= index && !c.bad; i++)
		read_entry(&c, f, u, strings, out);
	return !c.bad && out->path;
}

/* A file's name, its directory, and the directory relative directories are in. */
struct source_file {
	const char *name, *dir, *comp_dir;
};

static bool v5_file(const struct line_unit *u, uint64_t index, const struct dwarf_strings *strings,
		    struct source_file *out)
{
	struct cursor c = u->tables, dirs;
	struct entry_formats dir_formats, file_formats;
	struct line_entry file, dir;
	uint64_t dir_count, file_count;

	dir_count = read_formats(&c, &dir_formats);
	dirs = c;
	for (uint64_t i = 0; i < dir_count && !c.bad; i++)
		read_entry(&c, &dir_formats, u, strings, &dir);
	file_count = read_formats(&c, &file_formats);
	if (c.bad || !v5_entry(c, &file_formats, file_count, index, u, strings, &file))
		return false;
	out->name = file.path;
	out->dir = v5_entry(dirs, &dir_formats, dir_count, file.dir, u, strings, &dir) ? dir.path : NULL;
	out->comp_dir = v5_entry(dirs, &dir_formats, dir_count, 0, u, strings, &dir) ? dir.path : NULL;
	return true;
}

/* Before v5: directories from 1 (0, the compilation's, is not in the table), files from 1. */
static bool v4_file(const struct line_unit *u, uint64_t index, struct source_file *out)
{
	struct cursor c = u->tables, dirs = u->tables;
	const char *s;
	uint64_t dir = 0;

	while ((s = read_string(&c)) && s[0])
		;
	for (uint64_t i = 1; (s = read_string(&c)) && s[0]; i++) {
		dir = read_uleb(&c);
		read_uleb(&c); /* modification time */
		read_uleb(&c); /* length */
		if (i == index)
			break;
	}
	if (c.bad || !s || !s[0])
		return false;
	out->name = s;
	out->dir = NULL;
	out->comp_dir = NULL;
	for (uint64_t i = 1; dir && (s = read_string(&dirs)) && s[0]; i++)
		if (i == dir) {
			out->dir = s;
			break;
		}
	return true;
}

/* The full path a line table gives a file: as much of dir and comp_dir as is known. */
static void source_path(const struct source_file *f, char *out, size_t size)
{
	const char *dir = f->dir && f->dir[0] ? f->dir : NULL;
	const char *comp_dir = f->comp_dir && f->comp_dir[0] ? f->comp_dir : NULL;

	out[0] = '\0';
	if (f->name[0] != '/') {
		if (dir == comp_dir)
			comp_dir = NULL; /* the file is in the compilation's directory */
		if (comp_dir && (!dir || dir[0] != '/')) {
			text_append(out, size, comp_dir);
			text_append(out, size, "/");
		}
		if (dir) {
			text_append(out, size, dir);
			text_append(out, size, "/");
		}
	}
	text_append(out, size, f->name);
}

/* ---- DWARF: running line programs ---- */

/* The registers of the line state machine that matter here. */
struct line_row {
	uint64_t address;
	uint64_t file;
	uint64_t line;
	unsigned op_index;
};

/* The row that covers the target best so far: the one starting closest below it. */
struct line_match {
	bool found;
	struct line_row row;
	struct line_unit unit;
};

/* One program's run: the row covering target into *best (if best), the rows' span. */
struct line_run {
	const struct line_unit *unit;
	uint64_t target;
	struct line_row row, prev; /* the registers; the last row of this sequence */
	bool have_prev;
	struct line_match *best;
	uint64_t low, high; /* the lowest and highest addresses of rows, sequence ends included */
};

static void line_run_reset(struct line_run *r)
{
	r->row = (struct line_row){ .file = 1, .line = 1 };
	r->have_prev = false;
}

static void advance_ops(struct line_run *r, uint64_t ops)
{
	const struct line_unit *u = r->unit;
	uint64_t total = r->row.op_index + ops;

	r->row.address += u->min_inst_length * (total / u->max_ops);
	r->row.op_index = (unsigned)(total % u->max_ops);
}

/* A row is appended: the previous one covers [its address, this address). */
static void emit_row(struct line_run *r, bool end_sequence)
{
	struct line_match *best = r->best;

	if (r->row.address < r->low)
		r->low = r->row.address;
	if (r->row.address > r->high)
		r->high = r->row.address;
	if (best && r->have_prev && r->prev.address <= r->target && r->target < r->row.address &&
	    (!best->found || r->prev.address > best->row.address)) {
		best->found = true;
		best->row = r->prev;
		best->unit = *r->unit;
	}
	r->prev = r->row;
	r->have_prev = !end_sequence;
	if (end_sequence)
		line_run_reset(r);
}

static void run_extended(struct line_run *r, struct cursor *c)
{
	uint64_t length = read_uleb(c);
	struct cursor op = { cursor_take(c, length), NULL, false };
	unsigned code;

	if (!op.p || length == 0)
		return;
	op.end = op.p + length;
	code = (unsigned)read_fixed(&op, 1);
	if (code == DW_LNE_end_sequence) {
		emit_row(r, true);
	} else if (code == DW_LNE_set_address && (length - 1 == 4 || length - 1 == 8)) {
		r->row.address = read_fixed(&op, (unsigned)(length - 1));
		r->row.op_index = 0;
	}
	/* define_file, set_discriminator and others: skipped whole. */
}

static void run_standard(struct line_run *r, struct cursor *c, unsigned op)
{
	const struct line_unit *u = r->unit;

	switch (op) {
	case DW_LNS_copy:
		emit_row(r, false);
		break;
	case DW_LNS_advance_pc:
		advance_ops(r, read_uleb(c));
		break;
	case DW_LNS_advance_line:
		r->row.line += (uint64_t)read_sleb(c);
		break;
	case DW_LNS_set_file:
		r->row.file = read_uleb(c);
		break;
	case DW_LNS_const_add_pc:
		advance_ops(r, (255u - u->opcode_base) / u->line_range);
		break;
	case DW_LNS_fixed_advance_pc:
		r->row.address += read_fixed(c, 2);
		r->row.op_index = 0;
		break;
	default: /* set_column, negate_stmt, basic_block, prologue/epilogue, isa, unknown */
		for (unsigned i = 0; i < u->opcode_lengths[op - 1]; i++)
			read_uleb(c);
	}
}

static void run_special(struct line_run *r, unsigned op)
{
	const struct line_unit *u = r->unit;
	unsigned adjusted = op - u->opcode_base;

	advance_ops(r, adjusted / u->line_range);
	r->row.line += (uint64_t)(int64_t)(u->line_base + (int)(adjusted % u->line_range));
	emit_row(r, false);
}

/* Run a unit's program; the span of its rows into *low, *high (if not NULL). */
static void run_program(const struct line_unit *u, uint64_t target, struct line_match *best,
			uint64_t *low, uint64_t *high)
{
	struct line_run r = { .unit = u, .target = target, .best = best, .low = UINT64_MAX };
	struct cursor c = u->program;
	const unsigned char *op;

	line_run_reset(&r);
	while ((op = cursor_take(&c, 1))) {
		if (*op == 0)
			run_extended(&r, &c);
		else if (*op < u->opcode_base)
			run_standard(&r, &c, *op);
		else
			run_special(&r, *op);
	}
	if (low)
		*low = r.low;
	if (high)
		*high = r.high;
}

/* The name of the row found, from its unit's file table. */
static bool line_match_name(const struct line_match *best, const struct dwarf_strings *strings,
			    char *file, size_t size, unsigned *line)
{
	struct source_file f;
	bool named;

	if (!best->found || best->row.line == 0 || best->row.line > UINT_MAX)
		return false;
	if (best->unit.version >= 5)
		named = v5_file(&best->unit, best->row.file, strings, &f);
	else
		named = v4_file(&best->unit, best->row.file, &f);
	if (!named || !f.name || !f.name[0])
		return false;
	source_path(&f, file, size);
	*line = (unsigned)best->row.line;
	return true;
}

/* ---- DWARF: an index of the units ---- */

/* The span of addresses of one unit's rows, and where the unit is in .debug_line. */
struct unit_span {
	uint64_t low, high;
	size_t offset;
};

/*
 * Every unit's span, found by running all programs once, so that a lookup
 * runs only the units whose span holds its address.  Its memory is an
 * anonymous mapping (no malloc), unmapped with the object; without it
 * (mmap failed) every lookup runs every unit.
 */
struct unit_index {
	struct unit_span *spans;
	size_t count, bytes;
	bool tried;
};

static size_t count_units(struct bytes debug_line)
{
	struct cursor all = cursor_of(debug_line);
	struct line_unit u;
	size_t n = 0;
	bool usable;

	while (cursor_left(&all) > 0 && line_unit_next(&all, &u, &usable))
		n++;
	return n;
}

static void unit_index_build(struct unit_index *index, struct bytes debug_line)
{
	struct cursor all = cursor_of(debug_line);
	size_t n = count_units(debug_line);
	struct line_unit u;
	bool usable;
	void *p;

	index->tried = true;
	if (n == 0)
		return;
	p = mmap(NULL, n * sizeof(struct unit_span), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	index->spans = p;
	index->bytes = n * sizeof(struct unit_span);
	for (size_t offset = 0; index->count < n && cursor_left(&all) > 0;
	     offset = (size_t)(all.p - debug_line.p)) {
		struct unit_span *span = &index->spans[index->count];

		if (!line_unit_next(&all, &u, &usable))
			break;
		if (!usable)
			continue;
		span->offset = offset;
		run_program(&u, 0, NULL, &span->low, &span->high);
		index->count++;
	}
}

static void unit_index_free(struct unit_index *index)
{
	if (index->spans)
		munmap(index->spans, index->bytes);
	*index = (struct unit_index){ 0 };
}

/* Run the unit at offset for target. */
static void run_unit_at(struct bytes debug_line, size_t offset, uint64_t target,
			struct line_match *best)
{
	struct cursor c = cursor_of(debug_line);
	struct line_unit u;
	bool usable;

	c.p += offset;
	if (line_unit_next(&c, &u, &usable) && usable)
		run_program(&u, target, best, NULL, NULL);
}

/* The file and line of vaddr in .debug_line: the units whose span holds it are run. */
static bool line_lookup(struct bytes debug_line, const struct dwarf_strings *strings,
			struct unit_index *index, uint64_t vaddr, char *file, size_t size,
			unsigned *line)
{
	static struct line_match best; /* static: frames stay small */
	struct cursor all = cursor_of(debug_line);
	struct line_unit u;
	bool usable;

	memset(&best, 0, sizeof(best));
	if (!index->tried)
		unit_index_build(index, debug_line);
	if (index->spans) {
		for (size_t i = 0; i < index->count; i++)
			if (index->spans[i].low <= vaddr && vaddr < index->spans[i].high)
				run_unit_at(debug_line, index->spans[i].offset, vaddr, &best);
	} else {
		while (cursor_left(&all) > 0 && line_unit_next(&all, &u, &usable))
			if (usable)
				run_program(&u, vaddr, &best, NULL, NULL);
	}
	return line_match_name(&best, strings, file, size, line);
}

/* ---- mapped files ---- */

/* The low 32 bits: overlayfs may set high bits in st_ino that /proc/self/maps lacks. */
static bool same_inode(uint64_t a, uint64_t b)
{
	return (uint32_t)a == (uint32_t)b;
}

/* Map a regular file read-only; inode, if not 0, must be the file's. */
static bool map_file(const char *path, uint64_t inode, struct bytes *out)
{
	struct stat st;
	void *p;
	int fd;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (inode && !same_inode(st.st_ino, inode))) {
		close(fd);
		return false;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return false;
	*out = (struct bytes){ p, (size_t)st.st_size };
	return true;
}

static void unmap_file(struct bytes *b)
{
	if (b->p)
		munmap((void *)b->p, b->size);
	*b = (struct bytes){ 0 };
}

/* ---- the object table ---- */

enum { OBJECTS = 16 };

/* An object file of this process, as mapped for naming its addresses. */
struct object {
	char path[PATH_MAX];
	uint64_t inode;
	bool in_use;
	struct elf binary, debug;    /* debug: the separate debug file, if one was used */
	struct symbols symbols;      /* .symtab (the object's or the debug file's), else .dynsym */
	struct bytes line;           /* .debug_line, the object's or the debug file's */
	struct dwarf_strings strings; /* from the same file as line */
	struct unit_index units;     /* of line, built on the first lookup */
};

static struct object objects[OBJECTS];
static unsigned objects_next; /* the slot to take when all are in use */
static char candidate[PATH_MAX]; /* a debug file's path being tried */

/* .debug_line and its string sections from e, if it has a .debug_line to read. */
static bool take_lines(struct object *o, const struct elf *e)
{
	if (!section_named_bytes(e, ".debug_line", &o->line))
		return false;
	if (!section_named_bytes(e, ".debug_line_str", &o->strings.line_str))
		o->strings.line_str = (struct bytes){ 0 };
	if (!section_named_bytes(e, ".debug_str", &o->strings.str))
		o->strings.str = (struct bytes){ 0 };
	return true;
}

static bool same_build_id(const struct elf *a, const struct elf *b)
{
	struct bytes ia, ib;

	if (!elf_build_id(a, &ia) || !elf_build_id(b, &ib))
		return true; /* nothing to compare */
	return ia.size == ib.size && memcmp(ia.p, ib.p, ia.size) == 0;
}

/* Use the file at candidate as o's debug file if it is one and brings what o lacks. */
static bool try_debug_file(struct object *o)
{
	struct bytes file;
	struct elf *d = &o->debug;
	bool helps = false;

	if (strcmp(candidate, o->path) == 0 || !map_file(candidate, 0, &file))
		return false;
	if (elf_parse(file, d) && same_build_id(&o->binary, d)) {
		if (!o->symbols.table.p && symbols_of_type(d, SHT_SYMTAB, &o->symbols))
			helps = true;
		if (!o->line.p && take_lines(o, d))
			helps = true;
	}
	if (!helps) {
		unmap_file(&file);
		memset(d, 0, sizeof(*d));
	}
	return helps;
}

static bool debug_by_build_id(struct object *o)
{
	struct bytes id;

	if (!elf_build_id(&o->binary, &id) || id.size < 2)
		return false;
	text_copy(candidate, sizeof(candidate), "/usr/lib/debug/.build-id/");
	text_append_hex(candidate, sizeof(candidate), id.p, 1);
	text_append(candidate, sizeof(candidate), "/");
	text_append_hex(candidate, sizeof(candidate), id.p + 1, id.size - 1);
	text_append(candidate, sizeof(candidate), ".debug");
	return try_debug_file(o);
}

/* prefix + the object's directory (with its '/') + middle + name. */
static void debuglink_path(const struct object *o, const char *prefix, const char *middle,
			   const char *name)
{
	const char *slash = strrchr(o->path, '/');

	text_copy(candidate, sizeof(candidate), prefix);
	text_append_n(candidate, sizeof(candidate), o->path, slash ? (size_t)(slash - o->path) + 1 : 0);
	text_append(candidate, sizeof(candidate), middle);
	text_append(candidate, sizeof(candidate), name);
}

/* .gnu_debuglink's name, in the object's directory, its .debug/, and under /usr/lib/debug. */
static bool debug_by_link(struct object *o)
{
	struct bytes link;
	const char *name;

	if (!section_named_bytes(&o->binary, ".gnu_debuglink", &link) ||
	    !(name = bytes_string(link, 0)) || !name[0])
		return false;
	debuglink_path(o, "", "", name);
	if (try_debug_file(o))
		return true;
	debuglink_path(o, "", ".debug/", name);
	if (try_debug_file(o))
		return true;
	debuglink_path(o, "/usr/lib/debug", "", name);
	return try_debug_file(o);
}

/* Map o's file and find its symbols and lines, in a debug file where it lacks them. */
static void object_load(struct object *o)
{
	struct bytes file;

	if (!map_file(o->path, o->inode, &file))
		return;
	if (!elf_parse(file, &o->binary)) {
		unmap_file(&file);
		memset(&o->binary, 0, sizeof(o->binary));
		return;
	}
	symbols_of_type(&o->binary, SHT_SYMTAB, &o->symbols);
	take_lines(o, &o->binary);
	if (!o->symbols.table.p || !o->line.p)
		if (!debug_by_build_id(o))
			debug_by_link(o);
	if (!o->symbols.table.p)
		symbols_of_type(&o->binary, SHT_DYNSYM, &o->symbols);
}

static void object_unload(struct object *o)
{
	unit_index_free(&o->units);
	unmap_file(&o->binary.file);
	unmap_file(&o->debug.file);
	memset(o, 0, sizeof(*o));
}

/* The table's entry for a file, loaded on first use (its file may be unusable). */
static struct object *object_get(const char *path, uint64_t inode)
{
	struct object *o;

	for (unsigned i = 0; i < OBJECTS; i++)
		if (objects[i].in_use && objects[i].inode == inode && strcmp(objects[i].path, path) == 0)
			return &objects[i];
	o = NULL;
	for (unsigned i = 0; i < OBJECTS && !o; i++)
		if (!objects[i].in_use)
			o = &objects[i];
	if (!o) {
		o = &objects[objects_next];
		objects_next = (objects_next + 1) % OBJECTS;
		object_unload(o);
	}
	if (strlen(path) >= sizeof(o->path))
		return NULL;
	text_copy(o->path, sizeof(o->path), path);
	o->inode = inode;
	o->in_use = true;
	object_load(o);
	return o;
}

/* ---- /proc/self/maps ---- */

/* The mapping that holds an address, and its object's load base. */
struct mapping {
	uintptr_t start, offset, base;
	uint64_t inode;
	const char *path; /* "" for a mapping of no file */
};

/* One line of /proc/self/maps, split. */
struct maps_line {
	uintptr_t start, end, offset;
	uint64_t dev, inode;
	char *path;
};

static char maps_buffer[PATH_MAX + 4096];
static char found_path[PATH_MAX];

static uint64_t parse_number(char **s, unsigned base)
{
	uint64_t v = 0;

	for (;; (*s)++) {
		unsigned d;

		if (**s >= '0' && **s <= '9')
			d = (unsigned)(**s - '0');
		else if (base == 16 && **s >= 'a' && **s <= 'f')
			d = (unsigned)(**s - 'a' + 10);
		else
			return v;
		v = v * base + d;
	}
}

/* Past one separator character c; false if it is not there. */
static bool parse_skip(char **s, char c)
{
	if (**s != c)
		return false;
	(*s)++;
	return true;
}

/* "start-end perms offset major:minor inode   path" */
static bool parse_maps_line(char *s, struct maps_line *m)
{
	m->start = (uintptr_t)parse_number(&s, 16);
	if (!parse_skip(&s, '-'))
		return false;
	m->end = (uintptr_t)parse_number(&s, 16);
	if (!parse_skip(&s, ' ') || !(s = strchr(s, ' ')) || !parse_skip(&s, ' '))
		return false;
	m->offset = (uintptr_t)parse_number(&s, 16);
	if (!parse_skip(&s, ' '))
		return false;
	m->dev = parse_number(&s, 16) << 32;
	if (!parse_skip(&s, ':'))
		return false;
	m->dev |= parse_number(&s, 16);
	if (!parse_skip(&s, ' '))
		return false;
	m->inode = parse_number(&s, 10);
	while (*s == ' ')
		s++;
	m->path = s;
	return true;
}

/* What the scan of the maps has seen so far. */
struct maps_scan {
	uintptr_t addr;
	uintptr_t base;      /* the start of the last mapping at file offset 0 ... */
	uint64_t base_dev;   /* ... of this file */
	uint64_t base_inode;
	bool found;
	struct mapping *out;
};

static void strip_deleted(char *path)
{
	static const char mark[] = " (deleted)";
	size_t len = strlen(path), n = sizeof(mark) - 1;

	if (len > n && strcmp(path + len - n, mark) == 0)
		path[len - n] = '\0';
}

/*
 * The kernel writes a newline in a mapped file's name as "\012" (and
 * nothing else escaped, so a name may also hold those four characters
 * themselves): the path with each "\012" read as a newline, if that is
 * the mapped file (its inode), else the path as written.
 */
static void maps_path_unescape(char *path, uint64_t inode)
{
	static char decoded[PATH_MAX];
	char *w = decoded;
	struct stat st;

	if (!strstr(path, "\\012"))
		return;
	for (const char *r = path; *r; r++) {
		if (strncmp(r, "\\012", 4) == 0) {
			*w++ = '\n';
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	if (stat(decoded, &st) == 0 && same_inode(st.st_ino, inode))
		memcpy(path, decoded, (size_t)(w - decoded) + 1);
}

/* One line: note a load base, or stop at the mapping holding the address. */
static void maps_scan_line(struct maps_scan *scan, char *line)
{
	struct maps_line m;
	struct mapping *out = scan->out;

	if (!parse_maps_line(line, &m))
		return;
	if (m.offset == 0 && m.inode != 0) {
		scan->base = m.start;
		scan->base_dev = m.dev;
		scan->base_inode = m.inode;
	}
	if (scan->addr < m.start || scan->addr >= m.end)
		return;
	scan->found = true;
	out->start = m.start;
	out->offset = m.offset;
	out->inode = m.inode;
	out->base = m.start - m.offset;
	if (m.inode != 0 && m.inode == scan->base_inode && m.dev == scan->base_dev)
		out->base = scan->base;
	text_copy(found_path, sizeof(found_path), m.path[0] == '/' ? m.path : "");
	strip_deleted(found_path);
	maps_path_unescape(found_path, m.inode);
	out->path = found_path;
}

/* Scan the complete lines in maps_buffer[0, *len); keep the partial one. */
static void maps_scan_buffer(struct maps_scan *scan, size_t *len)
{
	char *line = maps_buffer, *nl;
	size_t rest;

	while (!scan->found && (nl = memchr(line, '\n', *len - (size_t)(line - maps_buffer)))) {
		*nl = '\0';
		maps_scan_line(scan, line);
		line = nl + 1;
	}
	rest = *len - (size_t)(line - maps_buffer);
	memmove(maps_buffer, line, rest);
	*len = rest;
}

static ssize_t read_some(int fd, char *buf, size_t size)
{
	ssize_t n;

	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n;
}

/*
 * While a line too long for the buffer is being dropped: drop what of it
 * is in maps_buffer[0, *len).  Returns whether its end was reached.
 */
static bool drop_long_line(size_t *len)
{
	char *nl = memchr(maps_buffer, '\n', *len);

	if (!nl) {
		*len = 0;
		return false;
	}
	*len -= (size_t)(nl + 1 - maps_buffer);
	memmove(maps_buffer, nl + 1, *len);
	return true;
}

/* Stream /proc/self/maps to the mapping holding addr.  A line too long for the buffer is skipped. */
static bool maps_find(uintptr_t addr, struct mapping *out)
{
	struct maps_scan scan = { .addr = addr, .out = out };
	size_t len = 0;
	bool dropping = false;
	ssize_t n;
	int fd;

	do
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return false;
	while (!scan.found && (n = read_some(fd, maps_buffer + len, sizeof(maps_buffer) - 1 - len)) > 0) {
		len += (size_t)n;
		if (dropping && !drop_long_line(&len))
			continue;
		dropping = false;
		maps_scan_buffer(&scan, &len);
		if (len == sizeof(maps_buffer) - 1) {
			len = 0;
			dropping = true;
		}
	}
	if (!scan.found && !dropping && len > 0) {
		maps_buffer[len] = '\0';
		maps_scan_line(&scan, maps_buffer);
	}
	close(fd);
	return scan.found;
}

/* ---- naming ---- */

static void name_function(const struct object *o, uint64_t vaddr, struct site_name *out)
{
	struct symbol_pick pick;

	if (!symbol_lookup(&o->symbols, vaddr, &pick))
		return;
	if (!demangle(pick.name, out->function, sizeof(out->function)))
		text_copy(out->function, sizeof(out->function), pick.name);
	out->function_offset = (uintptr_t)(vaddr - pick.start);
}

static void name_line(struct object *o, uint64_t vaddr, struct site_name *out)
{
	unsigned line;

	if (o->line.p &&
	    line_lookup(o->line, &o->strings, &o->units, vaddr, out->file, sizeof(out->file), &line))
		out->line = line;
	else
		out->file[0] = '\0';
}

/* Name addr, held by the mapping m. */
static void name_in_mapping(const void *addr, const struct mapping *m, struct site_name *out)
{
	struct object *o;
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	if (!m->path[0])
		return;
	text_copy(out->object, sizeof(out->object), m->path);
	out->object_offset = (uintptr_t)addr - m->base;
	o = object_get(m->path, m->inode);
	if (!o || !o->binary.file.p ||
	    !file_vaddr(&o->binary, (uintptr_t)addr, m->start, m->offset, &vaddr))
		return;
	name_function(o, vaddr, out);
	name_line(o, vaddr - 1, out);
}

/* ---- the interface ---- */

const char *symbolizer_open(void)
{
	int fd;

	symbolizer_close();
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return "none (/proc/self/maps cannot be read)";
	close(fd);
	return "elf";
}

void symbolize(const void *addr, struct site_name *out)
{
	struct mapping m;
	int saved = errno;

	memset(out, 0, sizeof(*out));
	if (maps_find((uintptr_t)addr, &m))
		name_in_mapping(addr, &m, out);
	errno = saved;
}

void symbolize_in_file(const void *addr, const char *path, uintptr_t map_start,
		       uintptr_t map_offset, uintptr_t base, struct site_name *out)
{
	struct mapping m = { map_start, map_offset, base, 0, path };
	int saved = errno;

	name_in_mapping(addr, &m, out);
	errno = saved;
}

void symbolizer_close(void)
{
	for (unsigned i = 0; i < OBJECTS; i++)
		if (objects[i].in_use)
			object_unload(&objects[i]);
	objects_next = 0;
}
