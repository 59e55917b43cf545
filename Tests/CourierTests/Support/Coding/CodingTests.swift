import Testing

/// Namespace for the Coding tests, so `swift test --filter CodingTests`
/// selects exactly them.
@Suite enum CodingTests {}
