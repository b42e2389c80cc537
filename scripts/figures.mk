# automake fragment, included from Makefile.am
