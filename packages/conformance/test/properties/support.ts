// The property suites' conventions live in @turnjournal/test-support (one seed, one run count, one failure report for
// the whole repository); suites import checkProperty from here or from there.
export { checkProperty } from '@turnjournal/test-support';
