/// Lets generic code recognise `Optional` response types and produce `nil`
/// without knowing the wrapped type, e.g. to turn an empty HTTP body into
/// `nil` when the caller asked for `T?`.
///
/// ```swift
/// if let optional = T.self as? any OptionalMarker.Type,
///    let none = optional.noneValue as? T {
///     return none
/// }
/// ```
protocol OptionalMarker {
    /// `nil` of the conforming `Optional` type.
    static var noneValue: Self { get }
}

extension Optional: OptionalMarker {
    static var noneValue: Self { nil }
}
