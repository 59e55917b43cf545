import Foundation
import Testing
import Courier

/// What a ``ClientIdentity`` shows of itself: its kind and file names, never its secrets.
@Suite struct ClientIdentityTests {
    /// `dump` (and the debugger, which reads the mirror) showed the stored source whole — the
    /// PKCS#12 archive's bytes and `passphrase: "p12-passphrase-secret"` — also from a transport
    /// configuration's `clientIdentities` dumped by an app, where the description promised
    /// "never the key material or passphrase".
    @Test("description, debug output and dump never show the passphrase or the archive's bytes")
    func neverShowsItsSecrets() {
        let archive = Data("PKCS12-ARCHIVE-BYTES".utf8)
        let identities: [String: ClientIdentity] = [
            "api.example.com": .pkcs12(archive, passphrase: "p12-passphrase-secret"),
            "files.example.com": .pemFiles(
                certificate: URL(fileURLWithPath: "/keys/client-cert.pem"),
                privateKey: URL(fileURLWithPath: "/keys/client-key.pem"),
                passphrase: "pem-passphrase-secret"),
        ]
        for identity in identities.values {
            var dumped = ""
            dump(identity, to: &dumped)
            for text in ["\(identity)", String(reflecting: identity), dumped] {
                #expect(!text.contains("passphrase-secret"), "\(text)")
                #expect(!text.contains("80 75 67") && !text.contains("PKCS12-ARCHIVE"), "\(text)")
                #expect(text.contains("ClientIdentity("))
            }
        }
        var dumped = ""
        dump(identities, to: &dumped)
        #expect(!dumped.contains("passphrase-secret"), "\(dumped)")
        #expect(dumped.contains("client-key.pem"))
    }
}
