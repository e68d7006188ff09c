/* calc.c — a small integer expression evaluator, the program configs/tdd.ini teaches test file
 * by test file (docs/propose.md). Each test file holds lines "EXPRESSION => EXPECTED", EXPECTED
 * an integer or "error"; blank lines and lines starting with # are skipped.
 *   calc FILE    prints a line per expression and "N passed, M failed"; exit 1 when M > 0
 * The grammar grows one rule at a time, a proposal each; this is where it starts:
 *   expression := term (('+' | '-') term)*
 *   term       := number
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* p; /* the next character of the expression */
static const char* failed; /* why this expression cannot be evaluated; NULL while it can */

static void skip(void) {
  while (*p == ' ' || *p == '\t') ++p;
}

static long number(void) {
  skip();
  if (!isdigit((unsigned char)*p)) {
    failed = "error";
    return 0;
  }
  long v = 0;
  while (isdigit((unsigned char)*p)) v = v * 10 + (*p++ - '0');
  return v;
}

static long term(void) { return number(); }

static long expression(void) {
  long v = term();
  for (;;) {
    skip();
    if (*p == '+') {
      ++p;
      v += term();
    } else if (*p == '-') {
      ++p;
      v -= term();
    } else {
      return v;
    }
  }
}

static long evaluate(const char* text) {
  p = text;
  failed = NULL;
  long v = expression();
  skip();
  if (*p != '\0' && !failed) failed = "error";
  return v;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: calc FILE\n");
    return 2;
  }
  FILE* in = fopen(argv[1], "r");
  if (!in) {
    perror(argv[1]);
    return 2;
  }
  char line[1024];
  int passed = 0, failures = 0;
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '\0' || line[0] == '#') continue;
    char* arrow = strstr(line, "=>");
    if (!arrow) {
      printf("bad test line: %s\n", line);
      ++failures;
      continue;
    }
    *arrow = '\0';
    const char* expected = arrow + 2;
    while (*expected == ' ') ++expected;
    const long value = evaluate(line);
    char got[64];
    if (failed) snprintf(got, sizeof got, "%s", failed);
    else snprintf(got, sizeof got, "%ld", value);
    if (strcmp(got, expected) == 0) {
      ++passed;
    } else {
      printf("FAIL %s=> %s (got %s)\n", line, expected, got);
      ++failures;
    }
  }
  fclose(in);
  printf("%d passed, %d failed\n", passed, failures);
  return failures > 0;
}
