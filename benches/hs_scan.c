/* Hyperscan beside faultline on the same patterns (benches/scale.sh, benches/compare.sh).
 *
 *   gcc -O2 -o hs_scan benches/hs_scan.c -lhs
 *   hs_scan PATTERNS FILE      PATTERNS: `faultline db export --format patterns-unnamed`
 *
 * Compiles every pattern (one per line) into one block-mode database with
 * HS_FLAG_SINGLEMATCH (one report per pattern and block: faultline also stops at the first
 * match of a pattern on a line, and counting every repeat would only add callback time) and
 * HS_FLAG_MULTILINE (^ and $ at line ends, as faultline matches line by line). A pattern
 * Hyperscan refuses is dropped and counted. Then scans FILE (memory-mapped) on one thread in
 * blocks of up to 256 MiB cut after a newline, and prints one line:
 *   patterns N dropped D compile_s C scan_s S bytes B matches M scan_cpu_s U
 * where compile_s and scan_s are wall seconds of hs_compile_multi and of the hs_scan calls,
 * scan_cpu_s the process's CPU seconds during the hs_scan calls (steadier on a busy machine).
 */
#include <hs/hs.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ctx) {
    (void)id, (void)from, (void)to, (void)flags;
    ++*(unsigned long long *)ctx;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s PATTERNS FILE\n", argv[0]);
        return 2;
    }
    FILE *pf = fopen(argv[1], "r");
    if (!pf) {
        perror(argv[1]);
        return 2;
    }
    size_t cap = 1024, n = 0;
    char **pats = malloc(cap * sizeof *pats);
    char *line = NULL;
    size_t len = 0;
    ssize_t got;
    while ((got = getline(&line, &len, pf)) > 0) {
        if (line[got - 1] == '\n') line[--got] = 0;
        if (got == 0) continue;
        if (n == cap) pats = realloc(pats, (cap *= 2) * sizeof *pats);
        pats[n++] = strdup(line);
    }
    fclose(pf);
    unsigned *flags = malloc(n * sizeof *flags), *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) flags[i] = HS_FLAG_SINGLEMATCH | HS_FLAG_MULTILINE, ids[i] = i;

    hs_database_t *db = NULL;
    hs_compile_error_t *err = NULL;
    size_t dropped = 0, live = n;
    double t0 = now();
    /* A refused pattern is named by its index: drop it and compile again. */
    while (hs_compile_multi((const char *const *)pats, flags, ids, live, HS_MODE_BLOCK, NULL, &db,
                            &err) != HS_SUCCESS) {
        if (err->expression < 0 || (size_t)err->expression >= live) {
            fprintf(stderr, "hs_compile_multi: %s\n", err->message);
            return 2;
        }
        fprintf(stderr, "dropped pattern %u: %s\n", ids[err->expression], err->message);
        size_t k = err->expression;
        memmove(pats + k, pats + k + 1, (live - k - 1) * sizeof *pats);
        memmove(ids + k, ids + k + 1, (live - k - 1) * sizeof *ids);
        live--, dropped++;
        hs_free_compile_error(err);
    }
    double compile_s = now() - t0;

    hs_scratch_t *scratch = NULL;
    if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) {
        fprintf(stderr, "hs_alloc_scratch failed\n");
        return 2;
    }
    int fd = open(argv[2], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[2]);
        return 2;
    }
    size_t size = st.st_size;
    const char *data = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : "";
    if (data == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    unsigned long long matches = 0;
    const size_t block = 256u << 20;
    t0 = now();
    double c0 = cpu();
    for (size_t at = 0; at < size;) {
        size_t end = at + block < size ? at + block : size;
        if (end < size) {
            const char *nl = memrchr(data + at, '\n', end - at);
            if (nl) end = nl - data + 1;
        }
        if (hs_scan(db, data + at, end - at, 0, scratch, on_match, &matches) != HS_SUCCESS) {
            fprintf(stderr, "hs_scan failed\n");
            return 2;
        }
        at = end;
    }
    double scan_s = now() - t0, scan_cpu_s = cpu() - c0;
    printf("patterns %zu dropped %zu compile_s %.4f scan_s %.4f bytes %zu matches %llu scan_cpu_s %.4f\n",
           live, dropped, compile_s, scan_s, size, matches, scan_cpu_s);
    return 0;
}
