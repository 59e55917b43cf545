import Testing

extension Tag {
    /// A test whose outcome depends on the machine's load (a wall-clock bound against a real
    /// server, a race the test provokes on purpose). Give the reason in a comment beside the tag.
    /// `scripts/test` reruns any failed test once and lists it in its table of reruns, marked
    /// "timing-sensitive" or "not marked": a rerun of an unmarked test is a defect to find.
    /// A wall-clock bound that the parallel suite's load on a 2-core machine would break goes in
    /// a nested suite named `OnAQuietMachine`: `scripts/test` skips those in its parallel passes
    /// and runs them afterwards in a quiet pass of their own, one test at a time.
    @Tag static var timingSensitive: Tag
}
