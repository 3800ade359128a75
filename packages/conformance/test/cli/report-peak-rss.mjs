// Preloaded with `node --import` into a CLI run whose peak memory a test bounds: prints the process's peak resident
// set size, in KiB, on stderr as it exits (`peak_rss_kib=N`).
process.on('exit', () => {
  process.stderr.write(`peak_rss_kib=${process.resourceUsage().maxRSS}\n`);
});
