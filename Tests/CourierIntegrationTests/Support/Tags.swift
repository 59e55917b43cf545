import Testing

extension Tag {
    /// A test whose outcome depends on the machine's load (a wall-clock bound against a real
    /// server, a race the test provokes on purpose). Give the reason in a comment beside the tag.
    /// `scripts/test` reruns any failed test once and lists it in its table of reruns, marked
    /// "timing-sensitive" or "not marked": a rerun of an unmarked test is a defect to find.
    @Tag static var timingSensitive: Tag
}
