// ndtwin: the command-line front of libndtwin. All work happens in cli/ and the library.
#include "cli/cli.h"

int main(int argc, char** argv) { return ndt::RunCli(argc, argv); }
