/* Streams the bundled output through the C API in 7-byte pieces and prints every delta, then
   the final message. Build: cc -std=c99 stream_example.c $(pkg-config --cflags --libs chatpeg)
   Usage: stream_example <examples dir> */
#include <chatpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *dir, const char *name, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = malloc(1 << 20);
  *len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
  fclose(f);
  if (buf) buf[*len] = '\0';
  return buf;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "examples";
  size_t request_len = 0, output_len = 0;
  char *request = slurp(dir, "weather_request.json", &request_len);
  char *output = slurp(dir, "weather_output.txt", &output_len);
  char path[1024];
  snprintf(path, sizeof path, "%s/chatml_tools.jinja", dir);
  chatpeg_error err = {0};
  chatpeg_template *t = NULL;
  chatpeg_stream *s = NULL;
  int rc = request && output ? chatpeg_template_from_file(path, &t, &err) : CHATPEG_E_IO;
  if (rc == 0) rc = chatpeg_stream_new(t, request, &s, &err);
  printf("chatpeg %s\n", chatpeg_version());
  for (size_t at = 0; rc == 0 && at < output_len; at += 7) {
    char *deltas = NULL;
    size_t n = output_len - at < 7 ? output_len - at : 7;
    rc = chatpeg_stream_feed(s, output + at, n, &deltas, &err);
    if (rc == 0 && strcmp(deltas, "[]") != 0) printf("%s\n", deltas);
    chatpeg_free(deltas);
  }
  char *result = NULL;
  if (rc == 0) rc = chatpeg_stream_finish(s, &result, &err);
  if (rc == 0) printf("%s\n", result);
  if (rc != 0) fprintf(stderr, "chatpeg: %s (%s)\n", err.message ? err.message : "?", err.where ? err.where : "");
  chatpeg_free(result);
  chatpeg_error_clear(&err);
  chatpeg_stream_free(s);
  chatpeg_template_free(t);
  free(request);
  free(output);
  return rc == 0 ? 0 : 1;
}
