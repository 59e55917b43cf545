import Courier
import Foundation

extension Redactor {
    /// A copy that hides GraphQL variables entirely: the `variables` member of JSON bodies (at any
    /// depth) and the `variables` query parameter of `GET` operations become the redaction marker.
    ///
    /// Without it, variables are redacted like any other JSON: values under secret-looking names
    /// (`password`, `token`, `card_number`…) at any depth of a `POST` body are hidden, the rest is
    /// shown in debug logs — but a `GET` operation's `variables` parameter is JSON inside the URL
    /// and is shown as is. Use this when variables carry personal data.
    ///
    /// ```swift
    /// let logging = LoggingInterceptor(logger: logger, redactor: Redactor().hidingGraphQLVariables())
    /// ```
    public func hidingGraphQLVariables() -> Redactor {
        var copy = self
        copy.bodyFields.insert("variables")
        copy.queryParameters.insert("variables")
        return copy
    }
}
