/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_symbolize.c - naming code addresses (src/diag/symbolize.h), checked
 * against an addr2line on the same object and offset (llvm-addr2line,
 * eu-addr2line or binutils', see reference_tool): the same function,
 * the same file (base name; the whole path where ours is absolute) and
 * line.
 *
 * The objects: this program (built -g, a PIE); a small shared library
 * compiled here at run time once per form of line table (DWARF 2, 3, 4,
 * 5, 5 with MD5 entries, 5 written by the compiler, 64-bit DWARF 5),
 * whose one function lives in a header of a subdirectory; the same
 * library stripped, named from its debug file found by .gnu_debuglink;
 * and libc, named from its symbols.  Anomalies: an address in no object,
 * a /proc/self/maps longer than any buffer, truncated and corrupted
 * copies of this program's file.  And the rule of the report at exit: no
 * call to malloc, calloc, realloc or free (wrapped here and counted).
 *
 * Needs at run time: cc (gcc: the library's flags are gcc's), objcopy,
 * strip, and llvm-addr2line or eu-addr2line (elfutils); binutils'
 * addr2line 2.40 will do but for gas's DWARF 5 tables (reference_tool).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/check_run.h"
#include "../../src/diag/demangle.h"
#include "../../src/diag/symbolize.h"

#define TCASE_TIMEOUT 120
#define EXPORT __attribute__((visibility("default")))
#ifdef __clang__
#define NOT_INLINED __attribute__((noinline))
#else
#define NOT_INLINED __attribute__((noinline, noipa))
#endif

/* ---------------------------------------------------------- counting malloc */

/*
 * Not under ThreadSanitizer: its runtime calls malloc while it starts,
 * before it can run the instrumented code of a malloc defined here.  The
 * plain build (make check) runs naming_calls_no_allocator.
 */
#if defined(__SANITIZE_THREAD__)
#define COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef COUNTS_ALLOCATIONS
#define COUNTS_ALLOCATIONS 1
#endif

#if COUNTS_ALLOCATIONS

/*
 * malloc, calloc, realloc and free of the whole process, counted while
 * counting is set, passed on to the next definition (libc's).  dlsym's
 * own allocations while finding them are served from a static buffer.
 */
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static volatile int counting, allocator_calls;
static _Alignas(16) char bootstrap[8192];
static size_t bootstrap_used;
static int resolving;

static bool from_bootstrap(const void *p)
{
	return (const char *)p >= bootstrap && (const char *)p < bootstrap + sizeof(bootstrap);
}

static void *bootstrap_alloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(bootstrap) - bootstrap_used)
		return NULL;
	p = bootstrap + bootstrap_used;
	bootstrap_used += n;
	return p;
}

static bool resolve_allocator(void)
{
	if (next_free)
		return true;
	if (resolving)
		return false;
	resolving = 1;
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	resolving = 0;
	return next_free != NULL;
}

static void count_call(void)
{
	if (counting)
		allocator_calls++;
}

EXPORT void *malloc(size_t n)
{
	count_call();
	return resolve_allocator() ? next_malloc(n) : bootstrap_alloc(n);
}

EXPORT void *calloc(size_t n, size_t size)
{
	count_call();
	if (resolve_allocator())
		return next_calloc(n, size);
	return size && n > SIZE_MAX / size ? NULL : bootstrap_alloc(n * size); /* zeroed: static */
}

EXPORT void *realloc(void *p, size_t n)
{
	void *q;

	count_call();
	if (!from_bootstrap(p))
		return resolve_allocator() ? next_realloc(p, n) : bootstrap_alloc(n);
	q = malloc(n);
	if (q)
		memcpy(q, p, n < (size_t)(bootstrap + sizeof(bootstrap) - (char *)p) ?
				     n : (size_t)(bootstrap + sizeof(bootstrap) - (char *)p));
	return q;
}

EXPORT void free(void *p)
{
	count_call();
	if (p && !from_bootstrap(p) && resolve_allocator())
		next_free(p);
}
#endif /* COUNTS_ALLOCATIONS */

/* ---------------------------------------------------------------- helpers */

/* What addr2line says of an offset of an object. */
struct addr2line_answer {
	char function[512];
	char file[PATH_MAX];
	unsigned line;
};

static void chomp(char *s)
{
	s[strcspn(s, "\n")] = '\0';
}

static bool all_digits(const char *s)
{
	return s[0] && strspn(s, "0123456789") == strlen(s);
}

/* "path:line", "path:line:column", "path:line (discriminator n)", "??:0" or "path:?" */
static void parse_file_line(char *s, struct addr2line_answer *a)
{
	char *colon;

	chomp(s);
	s[strcspn(s, " ")] = '\0';
	colon = strrchr(s, ':');
	if (colon && all_digits(colon + 1)) {
		char *before;

		*colon = '\0';
		before = strrchr(s, ':');
		if (before && all_digits(before + 1))
			colon = before; /* the line is before the column */
		else
			*colon = ':';
	}
	a->line = 0;
	if (colon) {
		*colon = '\0';
		a->line = (unsigned)strtoul(colon + 1, NULL, 10);
	}
	snprintf(a->file, sizeof(a->file), "%.*s", (int)sizeof(a->file) - 1,
		 strcmp(s, "??") == 0 ? "" : s);
}

/*
 * The reference: $SYMBOLIZE_ADDR2LINE, else llvm-addr2line, else
 * eu-addr2line (elfutils; 0.188 reads no lines of clang's DWARF 5), else
 * binutils' addr2line, which (2.40) misreads the DWARF 5 file table gas
 * writes: it gives the library's header function the file symtest.c.
 */
static const char *reference_tool(void)
{
	static const char *const tools[] = { "llvm-addr2line", "eu-addr2line" };
	static char chosen[256];
	const char *env = getenv("SYMBOLIZE_ADDR2LINE");
	char cmd[300];

	if (chosen[0])
		return chosen;
	snprintf(chosen, sizeof(chosen), "%s", "addr2line");
	if (env && env[0]) {
		snprintf(chosen, sizeof(chosen), "%s", env);
		return chosen;
	}
	for (unsigned i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tools[i]);
		if (system(cmd) == 0) {
			snprintf(chosen, sizeof(chosen), "%s", tools[i]);
			break;
		}
	}
	return chosen;
}

static void addr2line(const char *object, uintptr_t offset, struct addr2line_answer *a)
{
	char cmd[PATH_MAX + 512], function[sizeof(a->function)], where[PATH_MAX + 64];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s -f -e '%s' 0x%lx", reference_tool(), object,
		 (unsigned long)offset);
	p = popen(cmd, "r");
	ck_assert_msg(p != NULL, "cannot run %s", cmd);
	ck_assert_msg(fgets(function, sizeof(function), p) && fgets(where, sizeof(where), p),
		      "no answer from %s", cmd);
	ck_assert_msg(pclose(p) == 0, "%s failed", cmd);
	chomp(function);
	snprintf(a->function, sizeof(a->function), "%s", strcmp(function, "??") == 0 ? "" : function);
	parse_file_line(where, a);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static const void *plus(const void *fn, uintptr_t offset)
{
	return (const void *)((uintptr_t)fn + offset);
}

/*
 * symbolize(addr) against addr2line: the function at the address, the
 * file and line at address - 1.  want_function: the name it must be
 * (NULL: any); want_line: the line it must be (0: any).
 */
static void check_site(const void *addr, const char *want_function, long want_offset,
		       unsigned want_line)
{
	struct site_name n;
	struct addr2line_answer fn, at;

	symbolize(addr, &n);
	ck_assert_msg(n.object[0] == '/', "no object for %p", addr);
	addr2line(n.object, n.object_offset, &fn);
	addr2line(n.object, n.object_offset - 1, &at);
	if (want_function)
		ck_assert_str_eq(n.function, want_function);
	ck_assert_msg(strcmp(n.function, fn.function) == 0, "%s+0x%lx: function %s, addr2line says %s",
		      n.object, (unsigned long)n.object_offset, n.function, fn.function);
	if (want_offset >= 0)
		ck_assert_uint_eq(n.function_offset, (uintptr_t)want_offset);
	ck_assert_msg(at.line > 0, "addr2line has no line for %s+0x%lx", n.object,
		      (unsigned long)n.object_offset - 1);
	ck_assert_msg(n.line == at.line && strcmp(base_name(n.file), base_name(at.file)) == 0,
		      "%s+0x%lx: %s:%u, addr2line says %s:%u", n.object,
		      (unsigned long)n.object_offset - 1, n.file, n.line, at.file, at.line);
	if (n.file[0] == '/')
		ck_assert_str_eq(n.file, at.file);
	if (want_line)
		ck_assert_uint_eq(n.line, want_line);
}

static void run(const char *cmd)
{
	int status = system(cmd);

	ck_assert_msg(status == 0, "failed (%d): %s", status, cmd);
}

/* A whole file, read into memory. */
static unsigned char *read_file(const char *path, size_t *size)
{
	struct stat st;
	unsigned char *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_msg(fd >= 0 && fstat(fd, &st) == 0, "cannot read %s", path);
	p = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pread(fd, p, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return p;
}

static void write_file(const char *path, const void *p, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_msg(fd >= 0, "cannot write %s", path);
	ck_assert_int_eq(write(fd, p, size), (ssize_t)size);
	close(fd);
}

/* Where a section of a 64-bit ELF image lies: false if it has none. */
static bool find_section(const unsigned char *image, size_t size, const char *name,
			 Elf64_Shdr *out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
	const Elf64_Shdr *sh;
	const char *names;

	ck_assert(size >= sizeof(*eh) && eh->e_shoff + eh->e_shnum * sizeof(*sh) <= size);
	sh = (const Elf64_Shdr *)(image + eh->e_shoff);
	names = (const char *)image + sh[eh->e_shstrndx].sh_offset;
	for (unsigned i = 1; i < eh->e_shnum; i++)
		if (strcmp(names + sh[i].sh_name, name) == 0) {
			*out = sh[i];
			return true;
		}
	return false;
}

static char temp_dir[] = "/tmp/test_symbolize.XXXXXX";

static const char *make_temp_dir(void)
{
	ck_assert_ptr_nonnull(mkdtemp(temp_dir));
	return temp_dir;
}

static void remove_temp_dir(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", temp_dir);
	run(cmd);
}

/* ------------------------------------------------ this program's functions */

volatile int sink;
static const void *captured_return;
static unsigned capture_line;

NOT_INLINED int symbolize_target_global(int x)
{
	sink += x;
	return sink * 3 + x;
}

static NOT_INLINED int symbolize_target_static(int x)
{
	sink ^= x;
	return sink + 7 * x;
}

static NOT_INLINED void capture_return_address(void)
{
	captured_return = __builtin_return_address(0);
	sink++;
}

static NOT_INLINED int call_capture(void)
{
	sink += 2;
	capture_return_address(); capture_line = __LINE__;
	return sink;
}

/* ------------------------------------------------ a library built at run time */

/* The library's source; the line of the call in symtest_call is found by its text. */
static const char *const library_source[] = {
	"#include \"inc/symtest_helper.h\"",
	"volatile int symtest_sink;",
	"static __attribute__((noinline)) int symtest_static(int x)",
	"{",
	"	symtest_sink += x;",
	"	return x * 3 + symtest_sink;",
	"}",
	"__attribute__((noinline)) int symtest_global(int x)",
	"{",
	"	symtest_sink += x * 2;",
	"	return symtest_static(x) + symtest_helper(x) + 1;",
	"}",
	"__attribute__((noinline)) int symtest_call(void (*cb)(void))",
	"{",
	"	symtest_sink++;",
	"	cb();",
	"	return symtest_sink;",
	"}",
	"void *symtest_static_address(void) { return (void *)symtest_static; }",
	"void *symtest_helper_address(void) { return (void *)symtest_helper; }",
	"#ifdef SYMTEST_OTHER",
	"int symtest_other(void) { return 42; }",
	"#endif",
};

static const char library_helper[] =
	"extern volatile int symtest_sink;\n"
	"static __attribute__((noinline)) int symtest_helper(int x)\n"
	"{\n"
	"	symtest_sink ^= x;\n"
	"	return symtest_sink + x;\n"
	"}\n";

static unsigned library_call_line(void)
{
	for (unsigned i = 0; i < sizeof(library_source) / sizeof(library_source[0]); i++)
		if (strcmp(library_source[i], "	cb();") == 0)
			return i + 1;
	ck_abort_msg("no call in the library's source");
	return 0;
}

static void write_library_source(const char *dir)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/inc", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/inc/symtest_helper.h", dir);
	write_file(path, library_helper, strlen(library_helper));
	snprintf(path, sizeof(path), "%s/symtest.c", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (unsigned i = 0; i < sizeof(library_source) / sizeof(library_source[0]); i++)
		fprintf(f, "%s\n", library_source[i]);
	fclose(f);
}

/* The assembly with an MD5 on every .file directive: a v5 file table with DW_FORM_data16. */
static void add_md5(const char *from, const char *to)
{
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");
	char line[4096];

	ck_assert(in && out);
	while (fgets(line, sizeof(line), in)) {
		unsigned n;

		chomp(line);
		if (sscanf(line, "\t.file %u", &n) == 1)
			fprintf(out, "%s md5 0x00112233445566778899aabbccddeeff\n", line);
		else
			fprintf(out, "%s\n", line);
	}
	fclose(in);
	fclose(out);
}

/* One way of building the library: its line table's version and offset size. */
struct library_variant {
	const char *flags;
	bool md5;
	unsigned version, offset_size;
};

static const struct library_variant variants[] = {
	{ "-gdwarf-2 -gno-as-loc-support", false, 2, 4 },
	{ "-gdwarf-3", false, 3, 4 },
	{ "-gdwarf-4", false, 4, 4 },
	{ "-gdwarf-5", false, 5, 4 },
	{ "-gdwarf-5", true, 5, 4 },
	{ "-gdwarf-5 -gno-as-loc-support", false, 5, 4 },
	{ "-gdwarf-5 -gdwarf64 -gno-as-loc-support", false, 5, 8 },
};

static const char *compiler(void)
{
	const char *cc = getenv("CC");

	return cc && cc[0] ? cc : "cc";
}

/* Build dir/name from dir/symtest.c the variant's way, with extra defines. */
static void build_library(const char *dir, const char *name, const struct library_variant *v,
			  const char *defines)
{
	char cmd[4 * PATH_MAX], from[PATH_MAX], to[PATH_MAX];

	if (v->md5) {
		snprintf(cmd, sizeof(cmd), "cd '%s' && %s -O1 -fPIC %s %s -S symtest.c -o symtest.s",
			 dir, compiler(), v->flags, defines);
		run(cmd);
		snprintf(from, sizeof(from), "%s/symtest.s", dir);
		snprintf(to, sizeof(to), "%s/symtest_md5.s", dir);
		add_md5(from, to);
		snprintf(cmd, sizeof(cmd), "cd '%s' && %s -shared -o %s symtest_md5.s", dir,
			 compiler(), name);
	} else {
		snprintf(cmd, sizeof(cmd), "cd '%s' && %s -O1 -fPIC -shared %s %s -o %s symtest.c", dir,
			 compiler(), v->flags, defines, name);
	}
	run(cmd);
}

/* The library's line table is of the version and offset size the variant says. */
static void check_line_table_form(const char *path, const struct library_variant *v)
{
	size_t size;
	unsigned char *image = read_file(path, &size);
	Elf64_Shdr sh;
	uint32_t length;
	uint16_t version;
	size_t at;

	ck_assert_msg(find_section(image, size, ".debug_line", &sh), "%s: no .debug_line", path);
	memcpy(&length, image + sh.sh_offset, 4);
	at = sh.sh_offset + (length == 0xffffffff ? 12 : 4);
	memcpy(&version, image + at, 2);
	ck_assert_uint_eq(version, v->version);
	ck_assert_uint_eq(length == 0xffffffff ? 8 : 4, v->offset_size);
	free(image);
}

static void *open_library(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	ck_assert_msg(h != NULL, "dlopen %s: %s", path, dlerror());
	return h;
}

static void *library_function(void *h, const char *name)
{
	void *f = dlsym(h, name);

	ck_assert_msg(f != NULL, "no %s", name);
	return f;
}

static void callback_capture(void)
{
	captured_return = __builtin_return_address(0);
}

/* The library's functions named as addr2line names them in path (the same build). */
static void check_library_sites(void *h)
{
	int (*call)(void (*)(void)) = (int (*)(void (*)(void)))library_function(h, "symtest_call");
	void *(*static_address)(void) =
		(void *(*)(void))library_function(h, "symtest_static_address");
	void *(*helper_address)(void) =
		(void *(*)(void))library_function(h, "symtest_helper_address");

	check_site(plus(library_function(h, "symtest_global"), 1), "symtest_global", 1, 0);
	check_site(plus(static_address(), 2), "symtest_static", 2, 0);
	check_site(plus(helper_address(), 1), "symtest_helper", 1, 0);
	call(callback_capture);
	check_site(captured_return, "symtest_call", -1, library_call_line());
}

/* --------------------------------------------------------------- the tests */

START_TEST(open_says_elf)
{
	ck_assert_str_eq(symbolizer_open(), "elf");
	symbolizer_close();
}
END_TEST

START_TEST(names_functions_of_this_program)
{
	struct site_name n;

	symbolizer_open();
	check_site(plus(symbolize_target_global, 1), "symbolize_target_global", 1, 0);
	check_site(plus(symbolize_target_global, 5), "symbolize_target_global", 5, 0);
	check_site(plus(symbolize_target_static, 3), "symbolize_target_static", 3, 0);
	check_site(plus(call_capture, 1), "call_capture", 1, 0);
	symbolize(plus(symbolize_target_global, 1), &n);
	ck_assert_str_eq(base_name(n.file), "test_symbolize.c");
	symbolizer_close();
}
END_TEST

START_TEST(names_the_call_before_a_return_address)
{
	call_capture();
	symbolizer_open();
	check_site(captured_return, "call_capture", -1, capture_line);
	symbolizer_close();
}
END_TEST

START_TEST(names_a_libc_function_from_its_symbols)
{
	/* libc's own qsort: a sanitizer's runtime interposes the default one */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *fn = libc ? dlsym(libc, "qsort") : NULL;
	struct site_name n;

	ck_assert_ptr_nonnull(fn);
	symbolizer_open();
	symbolize(plus(fn, 3), &n);
	symbolizer_close();
	ck_assert_msg(strncmp(base_name(n.object), "libc", 4) == 0, "object %s", n.object);
	ck_assert_msg(n.function[0], "no name for qsort+3 in %s", n.object);
	ck_assert_msg(dlsym(libc, n.function) == plus(fn, 3 - n.function_offset),
		      "%s+0x%lx is not qsort+3", n.function, (unsigned long)n.function_offset);
	dlclose(libc);
}
END_TEST

START_TEST(names_a_library_with_each_form_of_line_table)
{
	const struct library_variant *v = &variants[_i];
	const char *dir = make_temp_dir();
	char path[PATH_MAX];
	void *h;

	write_library_source(dir);
	build_library(dir, "libsymtest.so", v, "");
	snprintf(path, sizeof(path), "%s/libsymtest.so", dir);
	check_line_table_form(path, v);
	h = open_library(path);
	symbolizer_open();
	check_library_sites(h);
	symbolizer_close();
	remove_temp_dir();
}
END_TEST

/*
 * The library stripped of .symtab and DWARF, its debug file beside it or
 * in .debug/ found by .gnu_debuglink; addr2line reads the unstripped copy.
 */
START_TEST(names_a_stripped_library_from_its_debug_file)
{
	static const char *const places[] = { "", ".debug/" };
	const char *dir = make_temp_dir();
	char cmd[4 * PATH_MAX], path[PATH_MAX];
	size_t size;
	unsigned char *image;
	Elf64_Shdr sh;
	struct site_name n;
	void *h;

	write_library_source(dir);
	build_library(dir, "libsymtest.so", &variants[3], "");
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p .debug && objcopy --only-keep-debug libsymtest.so "
		 "%slibsymtest.debug && strip --strip-all libsymtest.so && "
		 "objcopy --add-gnu-debuglink=%slibsymtest.debug libsymtest.so",
		 dir, places[_i], places[_i]);
	run(cmd);
	snprintf(path, sizeof(path), "%s/libsymtest.so", dir);
	image = read_file(path, &size);
	ck_assert(!find_section(image, size, ".symtab", &sh) && !find_section(image, size, ".debug_line", &sh));
	free(image);
	h = open_library(path);
	symbolizer_open();
	symbolize(plus(((void *(*)(void))library_function(h, "symtest_static_address"))(), 2), &n);
	ck_assert_str_eq(n.function, "symtest_static");
	ck_assert_str_eq(base_name(n.file), "symtest.c");
	check_library_sites(h); /* addr2line follows the debuglink too */
	symbolizer_close();
	remove_temp_dir();
}
END_TEST

/* A debug file whose build-id is another build's gives nothing. */
START_TEST(a_debug_file_of_another_build_is_not_used)
{
	const char *dir = make_temp_dir();
	char cmd[4 * PATH_MAX], path[PATH_MAX];
	struct site_name n;
	void *h;

	write_library_source(dir);
	build_library(dir, "libother.so", &variants[3], "-DSYMTEST_OTHER");
	build_library(dir, "libsymtest.so", &variants[3], "");
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && objcopy --only-keep-debug libsymtest.so libsymtest.debug && "
		 "strip --strip-all libsymtest.so && "
		 "objcopy --add-gnu-debuglink=libsymtest.debug libsymtest.so && "
		 "objcopy --only-keep-debug libother.so libsymtest.debug",
		 dir);
	run(cmd);
	snprintf(path, sizeof(path), "%s/libsymtest.so", dir);
	h = open_library(path);
	symbolizer_open();
	symbolize(plus(((void *(*)(void))library_function(h, "symtest_static_address"))(), 2), &n);
	ck_assert_str_ne(n.function, "symtest_static");
	ck_assert_str_eq(n.file, "");
	symbolize(plus(library_function(h, "symtest_global"), 1), &n);
	ck_assert_str_eq(n.function, "symtest_global"); /* from .dynsym */
	ck_assert_str_eq(n.file, "");
	symbolizer_close();
	remove_temp_dir();
}
END_TEST

static void check_nothing(const void *addr)
{
	struct site_name n;

	symbolize(addr, &n);
	ck_assert_msg(n.object[0] == '\0' && n.function[0] == '\0' && n.file[0] == '\0' &&
			      n.line == 0,
		      "%p: %s %s %s:%u", addr, n.object, n.function, n.file, n.line);
}

START_TEST(an_address_in_no_object_names_nothing)
{
	int local = 0;
	void *heap = malloc(64);
	void *anonymous = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert(heap && anonymous != MAP_FAILED);
	symbolizer_open();
	check_nothing(NULL);
	check_nothing((void *)1);
	check_nothing(&local);
	check_nothing(heap);
	check_nothing(anonymous);
	check_nothing((void *)UINTPTR_MAX);
	symbolizer_close();
	free(heap);
	munmap(anonymous, 4096);
}
END_TEST

/* The mappings of the file at path in /proc/self/maps, and the offset of the line of the last one with code. */
static unsigned count_mappings(const char *path, long *last_code_at, char *last_code_path,
			       uintptr_t *last_code_start)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 256];
	unsigned count = 0;
	long at = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		unsigned long start;
		char perms[5];

		chomp(line);
		if (p && path && strcmp(p, path) == 0)
			count++;
		if (p && last_code_path && sscanf(line, "%lx-%*x %4s", &start, perms) == 2 &&
		    perms[2] == 'x') {
			*last_code_at = at;
			snprintf(last_code_path, PATH_MAX, "%s", p);
			*last_code_start = start;
		}
		at += (long)strlen(line) + 1;
	}
	fclose(f);
	return count;
}

START_TEST(each_object_is_mapped_once_and_unmapped_at_close)
{
	struct site_name n;
	unsigned before;

	symbolizer_open();
	symbolize(plus(symbolize_target_global, 1), &n);
	symbolizer_close();
	before = count_mappings(n.object, NULL, NULL, NULL);
	symbolizer_open();
	for (int i = 0; i < 100; i++)
		symbolize(plus(i % 2 ? symbolize_target_global : symbolize_target_static, 1 + i % 5), &n);
	ck_assert_uint_eq(count_mappings(n.object, NULL, NULL, NULL), before + 1);
	symbolizer_close();
	ck_assert_uint_eq(count_mappings(n.object, NULL, NULL, NULL), before);
}
END_TEST

/* Thousands of mappings before the last object's: the maps are read in pieces. */
START_TEST(names_past_a_long_maps_file)
{
	enum { MAPPINGS = 6000 };
	size_t page = (size_t)getpagesize();
	char *area = mmap(NULL, MAPPINGS * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char last_path[PATH_MAX];
	uintptr_t last_start;
	long last_at = 0;
	struct site_name n;

	ck_assert(area != MAP_FAILED);
	for (size_t i = 1; i < MAPPINGS; i += 2)
		ck_assert_int_eq(mprotect(area + i * page, page, PROT_NONE), 0);
	count_mappings(NULL, &last_at, last_path, &last_start);
	ck_assert_msg(last_at > 256 * 1024, "the last code mapping is at %ld in the maps", last_at);
	symbolizer_open();
	symbolize((const void *)(last_start + 16), &n);
	ck_assert_str_eq(n.object, last_path);
	check_site(plus(symbolize_target_global, 1), "symbolize_target_global", 1, 0);
	symbolizer_close();
	munmap(area, MAPPINGS * page);
}
END_TEST

/* This program's file, read, with the load base of this run and a copy's path. */
struct program_copy {
	unsigned char *image;
	size_t size;
	uintptr_t base;
	char path[PATH_MAX];
};

static void copy_program(struct program_copy *c)
{
	struct site_name n;

	symbolizer_open();
	symbolize(plus(symbolize_target_global, 1), &n);
	symbolizer_close();
	ck_assert(n.object[0] == '/');
	c->base = (uintptr_t)symbolize_target_global + 1 - n.object_offset;
	c->image = read_file(n.object, &c->size);
	snprintf(c->path, sizeof(c->path), "%s/copy", make_temp_dir());
}

/* Name a few addresses as though they were in the file at path (mapped at the base). */
static void name_from(const struct program_copy *c, const char *path, struct site_name *n)
{
	symbolize_in_file(plus(symbolize_target_global, 1), path, c->base, 0, c->base, n);
	symbolize_in_file(captured_return ? captured_return : plus(call_capture, 9), path, c->base,
			  0, c->base, n);
	symbolize_in_file(plus(symbolize_target_static, 2), path, c->base, 0, c->base, n);
}

START_TEST(a_copy_of_the_program_names_as_the_program)
{
	struct program_copy c;
	struct site_name n;

	copy_program(&c);
	write_file(c.path, c.image, c.size);
	symbolizer_open();
	symbolize_in_file(plus(symbolize_target_global, 1), c.path, c.base, 0, c.base, &n);
	ck_assert_str_eq(n.function, "symbolize_target_global");
	ck_assert_uint_eq(n.function_offset, 1);
	ck_assert_str_eq(base_name(n.file), "test_symbolize.c");
	ck_assert_str_eq(n.object, c.path);
	symbolizer_close();
	free(c.image);
	remove_temp_dir();
}
END_TEST

START_TEST(a_truncated_file_does_not_crash)
{
	struct program_copy c;
	const Elf64_Ehdr *eh;
	size_t cuts[512], ncuts = 0;
	char path[PATH_MAX + 32];
	struct site_name n;

	copy_program(&c);
	eh = (const Elf64_Ehdr *)c.image;
	for (size_t s = 0; s < 80; s++)
		cuts[ncuts++] = s;
	cuts[ncuts++] = eh->e_phoff + eh->e_phnum * sizeof(Elf64_Phdr) - 1;
	cuts[ncuts++] = eh->e_shoff;
	cuts[ncuts++] = eh->e_shoff + sizeof(Elf64_Shdr) * 3 + 5;
	cuts[ncuts++] = c.size - 1;
	for (unsigned i = 1; i < eh->e_shnum && ncuts + 3 < sizeof(cuts) / sizeof(cuts[0]); i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(c.image + eh->e_shoff) + i;

		cuts[ncuts++] = sh->sh_offset;
		cuts[ncuts++] = sh->sh_offset + sh->sh_size / 2;
		cuts[ncuts++] = sh->sh_offset + sh->sh_size - 1;
	}
	symbolizer_open();
	for (size_t i = 0; i < ncuts; i++) {
		if (cuts[i] >= c.size)
			continue;
		snprintf(path, sizeof(path), "%s.%zu", c.path, i);
		write_file(path, c.image, cuts[i]);
		name_from(&c, path, &n);
	}
	symbolizer_close();
	free(c.image);
	remove_temp_dir();
}
END_TEST

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Corrupt a few bytes of [from, from + size) of the image: random, or all ones. */
static void corrupt(unsigned char *image, size_t from, size_t size, uint64_t *seed)
{
	unsigned count = 1 + (unsigned)(xorshift(seed) % 8);

	if (size == 0)
		return;
	for (unsigned i = 0; i < count; i++) {
		size_t at = from + xorshift(seed) % size;
		unsigned char v = (unsigned char)xorshift(seed);

		image[at] = xorshift(seed) % 4 == 0 ? 0xff : v;
	}
}

START_TEST(a_corrupted_file_does_not_crash)
{
	static const char *const sections[] = {
		".debug_line", ".debug_line_str", ".symtab", ".strtab", ".dynsym", ".dynstr",
		".note.gnu.build-id", ".shstrtab",
	};
	enum { ROUNDS = 3000 };
	struct program_copy c;
	unsigned char *work;
	const Elf64_Ehdr *eh;
	uint64_t seed = 0x9e3779b97f4a7c15u;
	struct site_name n;

	copy_program(&c);
	eh = (const Elf64_Ehdr *)c.image;
	work = malloc(c.size);
	ck_assert_ptr_nonnull(work);
	for (unsigned round = 0; round < ROUNDS; round++) {
		unsigned region = round % (4 + sizeof(sections) / sizeof(sections[0]));
		Elf64_Shdr sh;

		memcpy(work, c.image, c.size);
		if (region == 0)
			corrupt(work, 0, sizeof(Elf64_Ehdr), &seed);
		else if (region == 1)
			corrupt(work, eh->e_phoff, eh->e_phnum * sizeof(Elf64_Phdr), &seed);
		else if (region == 2)
			corrupt(work, eh->e_shoff, eh->e_shnum * sizeof(Elf64_Shdr), &seed);
		else if (region == 3)
			corrupt(work, 0, c.size, &seed);
		else if (find_section(c.image, c.size, sections[region - 4], &sh))
			corrupt(work, sh.sh_offset, sh.sh_size, &seed);
		write_file(c.path, work, c.size);
		symbolizer_open();
		name_from(&c, c.path, &n);
		symbolizer_close();
	}
	free(work);
	free(c.image);
	remove_temp_dir();
}
END_TEST

#if COUNTS_ALLOCATIONS
/* The report's rule: naming calls no allocator function, first use of a file or not. */
START_TEST(naming_calls_no_allocator)
{
	const char *dir = make_temp_dir();
	char path[PATH_MAX];
	struct site_name n;
	void *h, *fn = dlsym(RTLD_DEFAULT, "qsort"), *global;
	int calls;

	write_library_source(dir);
	build_library(dir, "libsymtest.so", &variants[3], "");
	snprintf(path, sizeof(path), "%s/libsymtest.so", dir);
	h = open_library(path);
	global = library_function(h, "symtest_global");
	call_capture();
	allocator_calls = 0;
	counting = 1;
	for (int round = 0; round < 2; round++) {
		symbolizer_open();
		symbolize(plus(symbolize_target_global, 1), &n);
		symbolize(captured_return, &n);
		symbolize(plus(global, 1), &n);
		symbolize(plus(fn, 3), &n);
		symbolize(NULL, &n);
		symbolize(&n, &n);
		symbolizer_close();
	}
	counting = 0;
	calls = allocator_calls;
	ck_assert_int_eq(calls, 0);
	remove_temp_dir();
}
END_TEST
#endif

/* ---- demangle.c: the common forms, read without allocating ---- */

static void expect_demangled(const char *mangled, const char *want)
{
	char out[256];

	ck_assert_msg(demangle(mangled, out, sizeof(out)), "%s: not demangled", mangled);
	ck_assert_str_eq(out, want);
}

START_TEST(demangle_reads_nested_names_constructors_destructors_and_const_members)
{
	expect_demangled("_ZN7rocksdb4port7RWMutexC2Eb", "rocksdb::port::RWMutex::RWMutex(...)");
	expect_demangled("_ZN7rocksdb4port7RWMutexD2Ev", "rocksdb::port::RWMutex::~RWMutex()");
	expect_demangled("_ZNK3foo3bar3bazEv", "foo::bar::baz() const");
	expect_demangled("_ZNSt12shared_mutex4lockEv", "std::shared_mutex::lock()");
	expect_demangled("_Z3foov", "foo()");
	expect_demangled("_ZL6helperPv", "helper(...)");
	expect_demangled("_ZN3fooC1Ev.cold", "foo::foo().cold");
}
END_TEST

START_TEST(demangle_leaves_other_forms_and_plain_names_alone)
{
	char out[16] = "untouched";

	ck_assert(!demangle("main", out, sizeof(out)));
	ck_assert(!demangle("_ZN1a1bIiE1cEv", out, sizeof(out))); /* a template in the name */
	ck_assert(!demangle("_ZN3fooplERKS_", out, sizeof(out))); /* an operator */
	ck_assert(!demangle("_Z999x", out, sizeof(out)));         /* a length past the end */
	ck_assert(!demangle("_ZN7rocksdb4port7RWMutexC2Eb", out, sizeof(out))); /* too long */
	ck_assert_str_eq(out, "untouched");
}
END_TEST

static Suite *symbolize_suite(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc;

	tc = timed_tcase(s, "names", TCASE_TIMEOUT);
	tcase_add_test(tc, open_says_elf);
	tcase_add_test(tc, names_functions_of_this_program);
	tcase_add_test(tc, names_the_call_before_a_return_address);
	tcase_add_test(tc, names_a_libc_function_from_its_symbols);
	tcase_add_loop_test(tc, names_a_library_with_each_form_of_line_table, 0,
			    (int)(sizeof(variants) / sizeof(variants[0])));
	tcase_add_loop_test(tc, names_a_stripped_library_from_its_debug_file, 0, 2);
	tcase_add_test(tc, a_debug_file_of_another_build_is_not_used);
	tcase_add_test(tc, an_address_in_no_object_names_nothing);
	tcase_add_test(tc, names_past_a_long_maps_file);

	tc = tcase_create("demangle");
	tcase_add_test(tc, demangle_reads_nested_names_constructors_destructors_and_const_members);
	tcase_add_test(tc, demangle_leaves_other_forms_and_plain_names_alone);
	suite_add_tcase(s, tc);

	tc = timed_tcase(s, "resources", TCASE_TIMEOUT);
	tcase_add_test(tc, each_object_is_mapped_once_and_unmapped_at_close);
#if COUNTS_ALLOCATIONS
	tcase_add_test(tc, naming_calls_no_allocator);
#endif

	tc = timed_tcase(s, "anomalies", TCASE_TIMEOUT);
	tcase_add_test(tc, a_copy_of_the_program_names_as_the_program);
	tcase_add_test(tc, a_truncated_file_does_not_crash);
	tcase_add_test(tc, a_corrupted_file_does_not_crash);
	return s;
}

int main(void)
{
	return run_suite(symbolize_suite());
}
