import COpenSSL
import OrchardCrypto

/// Separates the `certificates` field of a CMS SignedData from the rest, with OpenSSL's generic ASN.1
/// reader and writer (SEQUENCE OF ANY keeps every element's original encoding, BER included).
///
/// Every token from the same Apple leaf carries the same certificates; parsing them is most of the cost
/// of parsing a token's signature. Their bytes identify an already validated chain, and the rest — the
/// SignerInfo with the signature and signed attributes, unchanged — is parsed and checked with the cached leaf.
package enum SignedDataSplitter {
    /// The raw `[0] certificates` element and a ContentInfo equal to the input without it, or nil when the
    /// input is not a ContentInfo holding a SignedData with certificates.
    package static func split(_ der: [UInt8]) -> (certificates: [UInt8], withoutCertificates: [UInt8])? {
        if let split = splitDefinite(der) { return split }
        return splitGeneric(der)
    }

    /// The DER of the ContentInfo type signedData (OBJECT IDENTIFIER 1.2.840.113549.1.7.2), from OpenSSL.
    private static let signedDataOID: [UInt8] = {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ASN1_OBJECT(OBJ_nid2obj(NID_pkcs7_signed), &output)
        guard length > 0, let output else { return [] }
        defer { orchard_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }()

    /// The split of a signature whose outer headers (ContentInfo, [0], SignedData and SignedData's
    /// elements) all have definite lengths, the usual case: OpenSSL's header reader (`ASN1_get_object`)
    /// finds the elements and its header writer (`ASN1_put_object`) frames the remaining ones, which are
    /// copied unchanged. The result is the same as `splitGeneric`'s; nil leaves the input to it.
    package static func splitDefinite(_ der: [UInt8]) -> (certificates: [UInt8], withoutCertificates: [UInt8])? {
        der.withUnsafeBufferPointer { buffer -> (certificates: [UInt8], withoutCertificates: [UInt8])? in
            defer { ERR_clear_error() }
            guard let base = buffer.baseAddress else { return nil }
            let end = base + buffer.count
            /// Reads one header at `cursor`: the content's start and length, and whether it is
            /// constructed; nil for an error or an indefinite length.
            func header(
                _ cursor: UnsafePointer<UInt8>, tag expectedTag: Int32, tagClass expectedClass: Int32
            ) -> (content: UnsafePointer<UInt8>, length: Int, constructed: Bool)? {
                var inner: UnsafePointer<UInt8>? = cursor
                var length = 0
                var tag: Int32 = 0
                var tagClass: Int32 = 0
                let result = ASN1_get_object(&inner, &length, &tag, &tagClass, end - cursor)
                guard result & 0x80 == 0, result & 0x01 == 0, let inner, tag == expectedTag,
                    tagClass == expectedClass, length <= end - inner
                else { return nil }
                return (inner, length, result & V_ASN1_CONSTRUCTED != 0)
            }
            // ContentInfo ::= SEQUENCE { contentType OBJECT IDENTIFIER, content [0] EXPLICIT SignedData }
            guard let contentInfo = header(base, tag: V_ASN1_SEQUENCE, tagClass: V_ASN1_UNIVERSAL),
                contentInfo.constructed, contentInfo.content + contentInfo.length == end
            else { return nil }
            let oid = signedDataOID
            guard !oid.isEmpty, end - contentInfo.content >= oid.count,
                memcmp(contentInfo.content, oid, oid.count) == 0
            else { return nil }
            let explicitStart = contentInfo.content + oid.count
            guard let explicit = header(explicitStart, tag: 0, tagClass: V_ASN1_CONTEXT_SPECIFIC), explicit.constructed,
                explicit.content + explicit.length == end,
                let signedData = header(explicit.content, tag: V_ASN1_SEQUENCE, tagClass: V_ASN1_UNIVERSAL),
                signedData.constructed, signedData.content + signedData.length == end
            else { return nil }
            // SignedData's elements; the one [0] IMPLICIT (constructed, context-specific) is `certificates`.
            var cursor = signedData.content
            var certificates: (start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>)?
            while cursor < end {
                var inner: UnsafePointer<UInt8>? = cursor
                var length = 0
                var tag: Int32 = 0
                var tagClass: Int32 = 0
                let result = ASN1_get_object(&inner, &length, &tag, &tagClass, end - cursor)
                guard result & 0x80 == 0, result & 0x01 == 0, let inner, length <= end - inner else { return nil }
                let next = inner + length
                if tag == 0, tagClass == V_ASN1_CONTEXT_SPECIFIC, result & V_ASN1_CONSTRUCTED != 0 {
                    guard certificates == nil else { return nil }
                    certificates = (cursor, next)
                }
                cursor = next
            }
            guard let certificates else { return nil }
            let certificateBytes = Array(
                UnsafeBufferPointer(start: certificates.start, count: certificates.end - certificates.start))
            // SignedData without certificates, in [0] EXPLICIT, in the ContentInfo, with minimal definite headers.
            let before = certificates.start - signedData.content
            let after = end - certificates.end
            let signedLength = before + after
            let signedTotal = Int(ASN1_object_size(1, Int32(signedLength), V_ASN1_SEQUENCE))
            let explicitTotal = Int(ASN1_object_size(1, Int32(signedTotal), 0))
            let contentLength = oid.count + explicitTotal
            let total = Int(ASN1_object_size(1, Int32(contentLength), V_ASN1_SEQUENCE))
            guard signedTotal > 0, explicitTotal > 0, total > 0 else { return nil }
            let stripped = [UInt8](unsafeUninitializedCapacity: total) { out, initialized in
                var writer: UnsafeMutablePointer<UInt8>? = out.baseAddress
                ASN1_put_object(&writer, 1, Int32(contentLength), V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL)
                writer!.update(from: oid, count: oid.count)
                writer! += oid.count
                ASN1_put_object(&writer, 1, Int32(signedTotal), 0, V_ASN1_CONTEXT_SPECIFIC)
                ASN1_put_object(&writer, 1, Int32(signedLength), V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL)
                writer!.update(from: signedData.content, count: before)
                writer! += before
                writer!.update(from: certificates.end, count: after)
                writer! += after
                initialized = writer! - out.baseAddress!
            }
            guard stripped.count == total else { return nil }
            return (certificateBytes, stripped)
        }
    }

    /// A constructed universal SEQUENCE's identifier octet.
    static let sequenceTag: UInt8 = 0x30

    /// The split with OpenSSL's generic ASN.1 reader and writer; handles indefinite lengths (BER).
    package static func splitGeneric(_ der: [UInt8]) -> (certificates: [UInt8], withoutCertificates: [UInt8])? {
        der.withUnsafeBufferPointer { buffer -> (certificates: [UInt8], withoutCertificates: [UInt8])? in
            defer { ERR_clear_error() }
            // A SEQUENCE is constructed (0x30). OpenSSL's SEQUENCE OF reader takes a primitive header (0x10) as
            // well, which its CMS parse refuses (fuzz campaign finding: such a SignedData verified once split and
            // framed again): the two headers it reads here are checked first.
            guard let base = buffer.baseAddress, base[0] == sequenceTag else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let contentInfo = d2i_ASN1_SEQUENCE_ANY(nil, &cursor, buffer.count) else { return nil }
            defer { orchard_sk_ASN1_TYPE_pop_free(contentInfo) }
            guard cursor == base + buffer.count, orchard_sk_ASN1_TYPE_num(contentInfo) == 2,
                let type = orchard_sk_ASN1_TYPE_value(contentInfo, 0), type.pointee.type == V_ASN1_OBJECT,
                OBJ_obj2nid(type.pointee.value.object) == NID_pkcs7_signed,
                let explicit = orchard_sk_ASN1_TYPE_value(contentInfo, 1), explicit.pointee.type == V_ASN1_OTHER,
                let wrapper = explicit.pointee.value.asn1_string, let wrapperData = wrapper.pointee.data
            else { return nil }

            // The [0] EXPLICIT header around the SignedData.
            let wrapperLength = Int(wrapper.pointee.length)
            var inner: UnsafePointer<UInt8>? = UnsafePointer(wrapperData)
            var length = 0
            var tag: Int32 = 0
            var tagClass: Int32 = 0
            let header = ASN1_get_object(&inner, &length, &tag, &tagClass, wrapperLength)
            guard header & 0x80 == 0, header & V_ASN1_CONSTRUCTED != 0, tag == 0, tagClass == V_ASN1_CONTEXT_SPECIFIC,
                let innerStart = inner
            else { return nil }
            let available = wrapperLength - (innerStart - UnsafePointer(wrapperData))
            guard available > 0, innerStart[0] == sequenceTag else { return nil }
            var signedCursor: UnsafePointer<UInt8>? = innerStart
            let indefinite = header & 0x01 != 0
            guard let signedData = d2i_ASN1_SEQUENCE_ANY(nil, &signedCursor, indefinite ? available : length)
            else { return nil }
            defer { orchard_sk_ASN1_TYPE_pop_free(signedData) }
            // The SignedData is all the [0] holds (then its end-of-contents octets, when its length is
            // indefinite), as OpenSSL's own parse requires: anything after it makes the token malformed on
            // the full path, so the split must not hide it.
            let wrapperEnd = UnsafePointer(wrapperData) + wrapperLength
            guard let signedEnd = signedCursor,
                indefinite
                    ? signedEnd + 2 == wrapperEnd && signedEnd[0] == 0 && signedEnd[1] == 0
                    : signedEnd == innerStart + length && signedEnd == wrapperEnd
            else { return nil }

            // The one [0] IMPLICIT element of SignedData is `certificates`.
            var certificatesIndex: Int32?
            for index in 0..<orchard_sk_ASN1_TYPE_num(signedData) {
                guard let element = orchard_sk_ASN1_TYPE_value(signedData, index), element.pointee.type == V_ASN1_OTHER,
                    let string = element.pointee.value.asn1_string, string.pointee.length > 0,
                    let data = string.pointee.data, data[0] == 0xA0
                else { continue }
                guard certificatesIndex == nil else { return nil }
                certificatesIndex = index
            }
            guard let certificatesIndex, let element = orchard_sk_ASN1_TYPE_delete(signedData, certificatesIndex) else {
                return nil
            }
            defer { ASN1_TYPE_free(element) }
            let string = element.pointee.value.asn1_string!
            let certificates = Array(UnsafeBufferPointer(start: string.pointee.data, count: Int(string.pointee.length)))

            // SignedData without certificates, wrapped again in [0] EXPLICIT, in the ContentInfo.
            guard let encodedSignedData = encode(signedData) else { return nil }
            let total = ASN1_object_size(1, Int32(encodedSignedData.count), 0)
            guard total > 0 else { return nil }
            var wrapped = [UInt8](repeating: 0, count: Int(total))
            wrapped.withUnsafeMutableBufferPointer { out in
                var writer: UnsafeMutablePointer<UInt8>? = out.baseAddress
                ASN1_put_object(&writer, 1, Int32(encodedSignedData.count), 0, V_ASN1_CONTEXT_SPECIFIC)
                if let writer {
                    encodedSignedData.withUnsafeBufferPointer { writer.update(from: $0.baseAddress!, count: $0.count) }
                }
            }
            guard ASN1_STRING_set(wrapper, wrapped, Int32(wrapped.count)) == 1, let stripped = encode(contentInfo)
            else {
                return nil
            }
            return (certificates, stripped)
        }
    }

    /// The placeholder that stands in for a detached signer identifier: an empty `subjectKeyIdentifier`
    /// (`[0] IMPLICIT OCTET STRING`), the smallest SignerIdentifier OpenSSL's CMS parser accepts.
    package static let signerIdentifierPlaceholder: [UInt8] = [0x80, 0x00]

    /// The one SignerInfo's `sid` when it is an IssuerAndSerialNumber, and the ContentInfo with that element
    /// replaced by ``signerIdentifierPlaceholder``; nil when any header on the way (ContentInfo, [0],
    /// SignedData, signerInfos, SignerInfo) is not a definite length, there is not exactly one SignerInfo, or
    /// its `sid` is not a SEQUENCE.
    ///
    /// The issuer name in `sid` is the costliest part of parsing a SignerInfo (OpenSSL canonicalizes every
    /// name it decodes). The caller compares the detached bytes with the IssuerAndSerialNumber of a leaf
    /// it holds: equal bytes name that leaf, as `CMS_SignerInfo_cert_cmp` would find; the signature, the
    /// signed attributes and the digest are untouched, and OpenSSL checks them as usual.
    package static func detachSignerIdentifier(_ der: [UInt8]) -> (signerIdentifier: [UInt8], rest: [UInt8])? {
        der.withUnsafeBufferPointer { buffer -> (signerIdentifier: [UInt8], rest: [UInt8])? in
            defer { ERR_clear_error() }
            guard let base = buffer.baseAddress else { return nil }
            let end = base + buffer.count
            /// One element: its header's start, its content and its end.
            struct Element {
                var start: UnsafePointer<UInt8>
                var content: UnsafePointer<UInt8>
                var end: UnsafePointer<UInt8>
                var tag: Int32
                var tagClass: Int32
                var constructed: Bool
            }
            func element(at cursor: UnsafePointer<UInt8>, within limit: UnsafePointer<UInt8>) -> Element? {
                guard cursor < limit else { return nil }
                var inner: UnsafePointer<UInt8>? = cursor
                var length = 0
                var tag: Int32 = 0
                var tagClass: Int32 = 0
                let result = ASN1_get_object(&inner, &length, &tag, &tagClass, limit - cursor)
                guard result & 0x80 == 0, result & 0x01 == 0, let inner, length <= limit - inner else { return nil }
                return Element(
                    start: cursor, content: inner, end: inner + length, tag: tag, tagClass: tagClass,
                    constructed: result & V_ASN1_CONSTRUCTED != 0)
            }
            // ContentInfo ::= SEQUENCE { contentType, [0] EXPLICIT SignedData }
            guard let contentInfo = element(at: base, within: end), contentInfo.end == end,
                contentInfo.tag == V_ASN1_SEQUENCE, contentInfo.constructed,
                let contentType = element(at: contentInfo.content, within: contentInfo.end),
                contentType.tag == V_ASN1_OBJECT,
                let explicit = element(at: contentType.end, within: contentInfo.end),
                explicit.tag == 0, explicit.tagClass == V_ASN1_CONTEXT_SPECIFIC, explicit.constructed,
                let signedData = element(at: explicit.content, within: explicit.end),
                signedData.tag == V_ASN1_SEQUENCE, signedData.constructed
            else { return nil }
            // SignedData's last element is signerInfos, a SET. Elements before it may be BER with indefinite
            // lengths (Apple's encapContentInfo is): OpenSSL's generic reader finds their end.
            var cursor = signedData.content
            var last: Element?
            while cursor < signedData.end {
                if let next = element(at: cursor, within: signedData.end) {
                    last = next
                    cursor = next.end
                    continue
                }
                var skip: UnsafePointer<UInt8>? = cursor
                guard let skipped = d2i_ASN1_TYPE(nil, &skip, signedData.end - cursor), let skip, skip > cursor
                else { return nil }
                ASN1_TYPE_free(skipped)
                last = nil
                cursor = skip
            }
            guard let signerInfos = last, signerInfos.tag == V_ASN1_SET, signerInfos.tagClass == V_ASN1_UNIVERSAL,
                signerInfos.constructed,
                let signerInfo = element(at: signerInfos.content, within: signerInfos.end),
                signerInfo.end == signerInfos.end, signerInfo.tag == V_ASN1_SEQUENCE, signerInfo.constructed,
                let version = element(at: signerInfo.content, within: signerInfo.end), version.tag == V_ASN1_INTEGER,
                let sid = element(at: version.end, within: signerInfo.end), sid.tag == V_ASN1_SEQUENCE,
                sid.tagClass == V_ASN1_UNIVERSAL, sid.constructed
            else { return nil }

            // Rebuild from the inside out: each frame keeps its bytes around the changed child and gets a header
            // for its new length.
            var encoded = signerIdentifierPlaceholder
            var child = sid
            for frame in [signerInfo, signerInfos, signedData, explicit, contentInfo] {
                let before = child.start - frame.content
                let after = frame.end - child.end
                let contentLength = before + encoded.count + after
                let total = Int(ASN1_object_size(1, Int32(contentLength), frame.tag))
                guard total > 0 else { return nil }
                encoded = [UInt8](unsafeUninitializedCapacity: total) { out, initialized in
                    var writer: UnsafeMutablePointer<UInt8>? = out.baseAddress
                    ASN1_put_object(&writer, 1, Int32(contentLength), frame.tag, frame.tagClass)
                    writer!.update(from: frame.content, count: before)
                    writer! += before
                    encoded.withUnsafeBufferPointer { writer!.update(from: $0.baseAddress!, count: $0.count) }
                    writer! += encoded.count
                    writer!.update(from: child.end, count: after)
                    writer! += after
                    initialized = writer! - out.baseAddress!
                }
                guard encoded.count == total else { return nil }
                child = frame
            }
            return (Array(UnsafeBufferPointer(start: sid.start, count: sid.end - sid.start)), encoded)
        }
    }

    /// The DER of `certificate`'s IssuerAndSerialNumber (`SEQUENCE { issuer Name, serialNumber INTEGER }`),
    /// as a SignerInfo naming it carries it; empty when OpenSSL cannot encode it.
    package static func issuerAndSerialNumber(of certificate: X509Certificate) -> [UInt8] {
        defer { OpenSSLErrorQueue.clear() }
        guard let issuer = der({ i2d_X509_NAME(X509_get_issuer_name(certificate.pointer), $0) }),
            let serial = der({ i2d_ASN1_INTEGER(X509_get0_serialNumber(certificate.pointer), $0) })
        else { return [] }
        let contentLength = issuer.count + serial.count
        let total = Int(ASN1_object_size(1, Int32(contentLength), V_ASN1_SEQUENCE))
        guard total > 0 else { return [] }
        var header = [UInt8](repeating: 0, count: total - contentLength)
        header.withUnsafeMutableBufferPointer { out in
            var writer: UnsafeMutablePointer<UInt8>? = out.baseAddress
            ASN1_put_object(&writer, 1, Int32(contentLength), V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL)
        }
        return header + issuer + serial
    }

    /// The bytes an OpenSSL `i2d_…` call writes (`encode` gets the output pointer), nil when it writes none. A
    /// parsed name or certificate writes the bytes it was parsed from.
    package static func der(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        let length = encode(&output)
        guard length > 0, let output else { return nil }
        defer { orchard_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    private static func encode(_ sequence: OpaquePointer) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ASN1_SEQUENCE_ANY(sequence, &output)
        guard length > 0, let output else { return nil }
        defer { orchard_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
