/* example_checker.c — a tiny per-file checker, as sqllogictest-style runners are: it checks one
 * file and prints "E errors out of T tests in FILE - S skipped." and exits with E (so an error
 * count of 256 wraps to exit code 0, as real runners' do). configs/per_file.ini and the per_file
 * tests use it (built as flotilla-example-checker).
 *
 *   flotilla-example-checker [--mode full|quick] [--scratch DIR] FILE
 *
 * File lines: "check A B" is a check that passes when the integers A and B are equal; "skip ..."
 * is a skipped check; "crash" aborts (SIGABRT); "sleep S" sleeps S seconds; "spawn S" starts a
 * child that sleeps S seconds in the checker's process group (a leftover to be killed); "exit N"
 * exits with N at once, printing no summary; '#' lines and blank lines are ignored. With
 * --scratch DIR (a per-file {tmpdir}) it keeps a scratch file DIR/db, as a database engine's
 * runner would, and fails (exit 2, no summary) unless DIR exists and holds no db yet.  --mode quick stops after the first 10 checks of a file: a
 * variant that runs fewer checks and still says it passed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int quick = 0;
  const char* scratch = NULL;
  while (argc > 3 && strncmp(argv[1], "--", 2) == 0) {
    if (strcmp(argv[1], "--mode") == 0) quick = strcmp(argv[2], "quick") == 0;
    else if (strcmp(argv[1], "--scratch") == 0) scratch = argv[2];
    else break;
    argv += 2;
    argc -= 2;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: flotilla-example-checker [--mode full|quick] [--scratch DIR] FILE\n");
    return 2;
  }
  if (scratch) {
    char path[4200];
    snprintf(path, sizeof path, "%s/db", scratch);
    FILE* db = fopen(path, "wx"); /* x: it must not exist yet */
    if (!db) {
      perror(path);
      return 2;
    }
    fclose(db);
  }
  FILE* in = fopen(argv[1], "r");
  if (!in) {
    perror(argv[1]);
    return 2;
  }
  char line[4096];
  int errors = 0, tests = 0, skipped = 0;
  while (fgets(line, sizeof line, in)) {
    long a = 0, b = 0, seconds = 0;
    if (quick && tests >= 10) break;
    if (sscanf(line, "check %ld %ld", &a, &b) == 2) {
      ++tests;
      if (a != b) {
        ++errors;
        printf("%s: check %d: %ld != %ld\n", argv[1], tests, a, b);
      }
    } else if (strncmp(line, "skip", 4) == 0) {
      ++skipped;
    } else if (strncmp(line, "crash", 5) == 0) {
      fflush(stdout);
      abort();
    } else if (sscanf(line, "sleep %ld", &seconds) == 1) {
      sleep((unsigned)seconds);
    } else if (sscanf(line, "exit %ld", &seconds) == 1) {
      return (int)seconds;
    } else if (sscanf(line, "spawn %ld", &seconds) == 1) {
      if (fork() == 0) {
        sleep((unsigned)seconds);
        _exit(0);
      }
    }
  }
  fclose(in);
  printf("%d errors out of %d tests in %s - %d skipped.\n", errors, tests, argv[1], skipped);
  return errors;
}
