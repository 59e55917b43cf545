import Courier
import Foundation

extension FileTokenStore {
    /// A store for one environment's tokens: the file `tokens.<namespace>.json` in `directory`.
    ///
    /// Pass `APIEnvironment.storageNamespace`, so each environment has its own file and a
    /// staging token is never read by production. Bytes of `namespace` other than ASCII letters,
    /// digits, `.`, `_` and `-` are percent-encoded, so the name never leaves `directory`.
    public init(directory: URL, namespace: String) {
        self.init(fileURL: directory.appendingPathComponent("tokens.\(TokenNamespace.fileSafe(namespace)).json"))
    }
}

enum TokenNamespace {
    /// `namespace` with every byte outside `[A-Za-z0-9._-]` as `%XX` (an injective mapping).
    static func fileSafe(_ namespace: String) -> String {
        var result = ""
        for byte in namespace.utf8 {
            if byte.isASCIIAlphanumeric || "._-".utf8.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
