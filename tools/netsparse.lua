-- netsparse.lua: Wireshark/tshark dissector for NetSparse (MICRO '25) packets.
--
-- A NetSparse packet is a RoCEv2 packet without ICRC:
--   Ethernet | IPv4 | UDP dst 4791 | IB BTH (12) | concatenation header (14) | PR...
--   concatenation header: pr_type (2) | dst (4) | prop_len (4) | num_prs (4)
--   PR: src (4) | tid (2) | idx (8) | req_id (4) | payload (prop_len bytes, responses only)
-- All fields big-endian (see externs/src/wire/ in the NetSparse toolchain).
--
-- Load it with:   wireshark -X lua_script:tools/netsparse.lua capture.pcap
--                 tshark -X lua_script:tools/netsparse.lua -r capture.pcap -Y netsparse
-- or copy it to your personal Lua plugins folder (Help > About > Folders).
--
-- Registration: the dissector takes UDP port 4791 and claims a packet when its
-- BTH is NetSparse's (opcode 0x04 RC SEND Only, destination QP 0x4E5350 "NSP")
-- or, failing that, when the bytes after the BTH form a well-shaped
-- concatenation layer. Every other RoCEv2 packet is handed to Wireshark's own
-- InfiniBand dissector unchanged. (Wireshark's InfiniBand dissector expects a
-- 4-byte ICRC that NetSparse packets do not carry, so the BTH is decoded here.)
--
-- Filterable fields: netsparse.type, netsparse.dst, netsparse.prop_len,
-- netsparse.num_prs, netsparse.pr, netsparse.pr.src, netsparse.pr.tid,
-- netsparse.pr.idx, netsparse.pr.req_id, netsparse.pr.payload,
-- netsparse.bth.opcode, netsparse.bth.pkey, netsparse.bth.dst_qp,
-- netsparse.bth.psn; e.g.  netsparse.pr.idx == 42 && netsparse.type == 2
--
-- Expert info: a PR count that overruns the packet, trailing bytes after the
-- last PR, an unknown PR type, a short packet.

local ROCEV2_PORT = 4791
local BTH_LEN = 12
local CONCAT_LEN = 14
local PR_HEADER_LEN = 18
local OPCODE_RC_SEND_ONLY = 0x04
local NETSPARSE_QP = 0x4E5350

local p = Proto("netsparse", "NetSparse (concatenation and PR layers)")
local bth_p = Proto("netsparse_bth", "InfiniBand BTH (NetSparse, no ICRC)")

local types = { [1] = "Read", [2] = "Response" }

local f = {
    bth_opcode = ProtoField.uint8("netsparse.bth.opcode", "Opcode", base.HEX),
    bth_flags = ProtoField.uint8("netsparse.bth.flags", "SE/M/Pad/TVer", base.HEX),
    bth_pkey = ProtoField.uint16("netsparse.bth.pkey", "Partition key", base.HEX),
    bth_dst_qp = ProtoField.uint24("netsparse.bth.dst_qp", "Destination QP", base.HEX),
    bth_ack = ProtoField.uint8("netsparse.bth.ack", "AckReq/reserved", base.HEX),
    bth_psn = ProtoField.uint24("netsparse.bth.psn", "Packet sequence number", base.DEC),
    ptype = ProtoField.uint16("netsparse.type", "PR type", base.DEC, types),
    dst = ProtoField.uint32("netsparse.dst", "Destination node", base.DEC),
    prop_len = ProtoField.uint32("netsparse.prop_len", "Property length", base.DEC),
    num_prs = ProtoField.uint32("netsparse.num_prs", "Number of PRs", base.DEC),
    pr = ProtoField.none("netsparse.pr", "PR"),
    pr_src = ProtoField.uint32("netsparse.pr.src", "Source node", base.DEC),
    pr_tid = ProtoField.uint16("netsparse.pr.tid", "Source RIG unit (tid)", base.DEC),
    pr_idx = ProtoField.uint64("netsparse.pr.idx", "Property idx", base.DEC),
    pr_req_id = ProtoField.uint32("netsparse.pr.req_id", "Request id", base.HEX),
    pr_payload = ProtoField.bytes("netsparse.pr.payload", "Payload (property)"),
    trailing = ProtoField.bytes("netsparse.trailing", "Trailing bytes"),
}
p.fields = {
    f.ptype, f.dst, f.prop_len, f.num_prs, f.pr, f.pr_src, f.pr_tid, f.pr_idx,
    f.pr_req_id, f.pr_payload, f.trailing,
}
bth_p.fields = { f.bth_opcode, f.bth_flags, f.bth_pkey, f.bth_dst_qp, f.bth_ack, f.bth_psn }

local e = {
    overrun = ProtoExpert.new("netsparse.overrun", "PR count overruns the packet",
        expert.group.MALFORMED, expert.severity.ERROR),
    trailing = ProtoExpert.new("netsparse.trailing_bytes", "Bytes after the last PR",
        expert.group.MALFORMED, expert.severity.WARN),
    bad_type = ProtoExpert.new("netsparse.bad_type", "Unknown PR type",
        expert.group.MALFORMED, expert.severity.ERROR),
    short = ProtoExpert.new("netsparse.short", "Packet too short for the concatenation header",
        expert.group.MALFORMED, expert.severity.ERROR),
}
p.experts = { e.overrun, e.trailing, e.bad_type, e.short }

-- Wireshark's own RoCEv2 dissector, for packets that are not NetSparse.
local udp_table = DissectorTable.get("udp.port")
local original = udp_table:get_dissector(ROCEV2_PORT)

local function is_netsparse_bth(tvb)
    if tvb:len() < BTH_LEN then
        return false
    end
    return tvb(0, 1):uint() == OPCODE_RC_SEND_ONLY and tvb(5, 3):uint() == NETSPARSE_QP
end

-- A well-shaped concatenation layer after the BTH (for a BTH that does not
-- carry NetSparse's QP).
local function looks_like_concat(tvb)
    local n = tvb:len() - BTH_LEN
    if n < CONCAT_LEN then
        return false
    end
    local t = tvb(BTH_LEN, 2):uint()
    if t ~= 1 and t ~= 2 then
        return false
    end
    local plen = tvb(BTH_LEN + 6, 4):uint()
    local count = tvb(BTH_LEN + 10, 4):uint()
    local stride = PR_HEADER_LEN + ((t == 2) and plen or 0)
    return count > 0 and CONCAT_LEN + count * stride == n
end

local function dissect_concat(tvb, pinfo, tree)
    local len = tvb:len()
    local root = tree:add(p, tvb())
    if len < CONCAT_LEN then
        root:add_proto_expert_info(e.short)
        return
    end
    local t = tvb(0, 2):uint()
    local dst = tvb(2, 4):uint()
    local plen = tvb(6, 4):uint()
    local count = tvb(10, 4):uint()
    local ti = root:add(f.ptype, tvb(0, 2))
    root:add(f.dst, tvb(2, 4))
    root:add(f.prop_len, tvb(6, 4))
    local ci = root:add(f.num_prs, tvb(10, 4))
    local tname = types[t]
    if tname == nil then
        ti:add_proto_expert_info(e.bad_type, "Unknown PR type " .. t)
        return
    end
    local stride = PR_HEADER_LEN + ((t == 2) and plen or 0)
    pinfo.cols.protocol = "NetSparse"
    pinfo.cols.info = string.format("%s to node %d: %d PR%s, %d-byte properties",
        tname, dst, count, (count == 1) and "" or "s", plen)
    root:append_text(string.format(", %s to node %d, %d PRs", tname, dst, count))
    local off = CONCAT_LEN
    for i = 1, count do
        if off + stride > len then
            ci:add_proto_expert_info(e.overrun, string.format(
                "PR count overruns the packet: %d PRs of %d bytes need %d bytes, %d present",
                count, stride, CONCAT_LEN + count * stride, len))
            return
        end
        local pt = root:add(f.pr, tvb(off, stride))
        pt:add(f.pr_src, tvb(off, 4))
        pt:add(f.pr_tid, tvb(off + 4, 2))
        pt:add(f.pr_idx, tvb(off + 6, 8))
        pt:add(f.pr_req_id, tvb(off + 14, 4))
        if t == 2 and plen > 0 then
            pt:add(f.pr_payload, tvb(off + PR_HEADER_LEN, plen))
        end
        pt:set_text(string.format("PR %d: src %d, tid %d, idx %s, req_id 0x%08x",
            i - 1, tvb(off, 4):uint(), tvb(off + 4, 2):uint(),
            tostring(tvb(off + 6, 8):uint64()), tvb(off + 14, 4):uint()))
        off = off + stride
    end
    if off < len then
        local tr = root:add(f.trailing, tvb(off, len - off))
        tr:add_proto_expert_info(e.trailing, string.format(
            "%d bytes after the last of %d PRs", len - off, count))
    end
end

function p.dissector(tvb, pinfo, tree)
    if not (is_netsparse_bth(tvb) or looks_like_concat(tvb)) then
        if original ~= nil then
            return original:call(tvb, pinfo, tree)
        end
        return 0
    end
    local bt = tree:add(bth_p, tvb(0, BTH_LEN))
    bt:add(f.bth_opcode, tvb(0, 1))
    bt:add(f.bth_flags, tvb(1, 1))
    bt:add(f.bth_pkey, tvb(2, 2))
    bt:add(f.bth_dst_qp, tvb(5, 3))
    bt:add(f.bth_ack, tvb(8, 1))
    bt:add(f.bth_psn, tvb(9, 3))
    if tvb:len() == BTH_LEN then
        tree:add(p, tvb(0, 0)):add_proto_expert_info(e.short)
        return tvb:len()
    end
    dissect_concat(tvb(BTH_LEN):tvb(), pinfo, tree)
    return tvb:len()
end

udp_table:add(ROCEV2_PORT, p)
