/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.c - naming code addresses for the profile's report
 * (symbolize.h).
 *
 * libdw is reached through dlopen/dlsym only, so the variants carry no
 * dependency on it; its header (libdw-dev) is needed at build time for the
 * types, and configure leaves this part out without it (HAVE_LIBDW_HEADERS).
 * One Dwfl session over this process's mappings (/proc/self/maps), made
 * at open and ended at close.
 */
#include "symbolize.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBDW_HEADERS
#include <elfutils/libdwfl.h>
#endif

static void copy_text(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* A C++ name demangled by the program's own libstdc++, if it has one loaded. */
static void set_function(struct site_name *out, const char *name)
{
	char *(*demangle)(const char *, char *, size_t *, int *) =
		(char *(*)(const char *, char *, size_t *, int *))dlsym(RTLD_DEFAULT,
									 "__cxa_demangle");
	char *plain = NULL;
	int status = -1;

	if (demangle && name && name[0] == '_' && name[1] == 'Z')
		plain = demangle(name, NULL, NULL, &status);
	copy_text(out->function, sizeof(out->function), status == 0 && plain ? plain : name);
	free(plain);
}

/* dladdr's answer: the object, and the function where the dynamic symbols have it. */
static void symbolize_dladdr(const void *addr, struct site_name *out)
{
	Dl_info info;

	if (!dladdr(addr, &info))
		return;
	copy_text(out->object, sizeof(out->object), info.dli_fname);
	out->object_offset = (uintptr_t)addr - (uintptr_t)info.dli_fbase;
	if (info.dli_sname && info.dli_saddr) {
		set_function(out, info.dli_sname);
		out->function_offset = (uintptr_t)addr - (uintptr_t)info.dli_saddr;
	}
}

#ifdef HAVE_LIBDW_HEADERS

/* The libdw functions used, from dlsym. */
static struct {
	void *handle;
	Dwfl *dwfl;
	Dwfl *(*begin)(const Dwfl_Callbacks *);
	void (*end)(Dwfl *);
	void (*report_begin)(Dwfl *);
	int (*proc_report)(Dwfl *, pid_t);
	int (*report_end)(Dwfl *, int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *),
			  void *);
	Dwfl_Module *(*addrmodule)(Dwfl *, Dwarf_Addr);
	const char *(*addrinfo)(Dwfl_Module *, GElf_Addr, GElf_Off *, GElf_Sym *, GElf_Word *,
				Elf **, Dwarf_Addr *);
	Dwfl_Line *(*getsrc)(Dwfl_Module *, Dwarf_Addr);
	const char *(*lineinfo)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *, Dwarf_Word *);
	Dwfl_Callbacks callbacks;
} dw;

/* No separate debug file: with DEBUGINFOD_URLS set, the standard search would ask a server. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static bool dw_symbols(void)
{
	void **want[] = {
		(void **)&dw.begin, (void **)&dw.end, (void **)&dw.report_begin,
		(void **)&dw.proc_report, (void **)&dw.report_end, (void **)&dw.addrmodule,
		(void **)&dw.addrinfo, (void **)&dw.getsrc, (void **)&dw.lineinfo,
		(void **)&dw.callbacks.find_elf, (void **)&dw.callbacks.find_debuginfo,
	};
	static const char *const names[] = {
		"dwfl_begin", "dwfl_end", "dwfl_report_begin", "dwfl_linux_proc_report",
		"dwfl_report_end", "dwfl_addrmodule", "dwfl_module_addrinfo", "dwfl_module_getsrc",
		"dwfl_lineinfo", "dwfl_linux_proc_find_elf", "dwfl_standard_find_debuginfo",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*want[i] = dlsym(dw.handle, names[i]);
		if (!*want[i])
			return false;
	}
	if (getenv("DEBUGINFOD_URLS"))
		dw.callbacks.find_debuginfo = no_debuginfo;
	return true;
}

/* NULL, or why not. */
static const char *dw_open(void)
{
	dw.handle = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!dw.handle)
		return "libdw.so.1 not found";
	if (!dw_symbols())
		return "libdw.so.1 lacks a function it needs";
	dw.dwfl = dw.begin(&dw.callbacks);
	if (!dw.dwfl)
		return "libdw could not start";
	dw.report_begin(dw.dwfl);
	if (dw.proc_report(dw.dwfl, getpid()) != 0 || dw.report_end(dw.dwfl, NULL, NULL) != 0) {
		dw.end(dw.dwfl);
		dw.dwfl = NULL;
		return "libdw could not read this process's mappings";
	}
	return NULL;
}

static void dw_close(void)
{
	if (dw.dwfl)
		dw.end(dw.dwfl);
	if (dw.handle)
		dlclose(dw.handle);
	memset(&dw, 0, sizeof(dw));
}

/* libdw's answer, over dladdr's: the function from the full symbol table, the line. */
static void symbolize_dw(const void *addr, struct site_name *out)
{
	Dwarf_Addr a = (Dwarf_Addr)(uintptr_t)addr;
	Dwfl_Module *mod;
	Dwfl_Line *line;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name, *file;
	int lineno = 0;

	if (!dw.dwfl || !(mod = dw.addrmodule(dw.dwfl, a)))
		return;
	name = dw.addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	if (name) {
		set_function(out, name);
		out->function_offset = (uintptr_t)off;
	}
	line = dw.getsrc(mod, a - 1);
	file = line ? dw.lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (file && lineno > 0) {
		copy_text(out->file, sizeof(out->file), file);
		out->line = (unsigned)lineno;
	}
}

#else

static const char *dw_open(void)
{
	return "libbravo was built without libdw's headers";
}

static void dw_close(void)
{
}

static void symbolize_dw(const void *addr, struct site_name *out)
{
	(void)addr;
	(void)out;
}

#endif

const char *symbolizer_open(void)
{
	static char what[128];
	const char *why = dw_open();

	if (!why)
		return "libdw";
	snprintf(what, sizeof(what), "dladdr only (%s: no source lines)", why);
	return what;
}

void symbolize(const void *addr, struct site_name *out)
{
	memset(out, 0, sizeof(*out));
	symbolize_dladdr(addr, out);
	symbolize_dw(addr, out);
}

void symbolizer_close(void)
{
	dw_close();
}
