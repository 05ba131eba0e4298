#!/usr/bin/env python3
# tests/lib/probesites.py: what a traced process's USDT sites look like in its memory.
#
#   probesites.py [--func PATTERN]... PID...
#                          one JSON line per pid: {"pid", "binary", "semaphores":
#                          {"PROVIDER:NAME": value}, "sites": N, "changed": [sites whose
#                          first byte in memory differs from the file's, as "0xADDR:cc"]};
#                          --func adds the entries of the functions matching PATTERN
#                          (fnmatch, from .dynsym/.symtab) to the sites compared
#
# Also a module: look(pid, funcs) returns that dict.
# Read independently of dbtap: the ELF notes parsed here, the bytes read from
# /proc/PID/mem. A uprobe left registered shows as an int3 (0xcc) where the file has
# the site's nop, and a semaphore left raised as a value above the one before.
import fnmatch
import json
import os
import struct
import sys

_cache = {}


def elf_notes(path, funcs=()):
    """The .note.stapsdt entries of path: (provider, name, pc, semaphore) as file vaddrs,
    then ("func", NAME, entry, 0) for each function matching one of funcs."""
    key = (path, tuple(funcs))
    if key in _cache:
        return _cache[key]
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    secs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size, link = struct.unpack_from(
            "<IIQQQQI", data, shoff + i * shentsize)
        secs.append((name, typ, addr, off, size, link))
    stroff = secs[shstrndx][3]

    def secname(s):
        end = data.index(b"\0", stroff + s[0])
        return data[stroff + s[0]:end].decode()

    base_addr = 0
    for s in secs:
        if secname(s) == ".stapsdt.base":
            base_addr = s[2]
    loads = []
    for i in range(phnum):
        typ, flags, off, vaddr, paddr, filesz, memsz = struct.unpack_from(
            "<IIQQQQQ", data, phoff + i * phentsize)
        if typ == 1:
            loads.append((vaddr, off, filesz))
    notes = []
    for s in secs:
        if secname(s) != ".note.stapsdt":
            continue
        p, end = s[3], s[3] + s[4]
        while p + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, p)
            name = data[p + 12:p + 12 + namesz]
            desc_off = p + 12 + ((namesz + 3) & ~3)
            desc = data[desc_off:desc_off + descsz]
            p = desc_off + ((descsz + 3) & ~3)
            if ntype != 3 or name != b"stapsdt\0":
                continue
            pc, base, sema = struct.unpack_from("<QQQ", desc, 0)
            prov, nm = desc[24:].split(b"\0")[:2]
            if base_addr and base:
                pc += base_addr - base
                if sema:
                    sema += base_addr - base
            notes.append((prov.decode(), nm.decode(), pc, sema))
    seen = set()
    for s in secs:
        if s[1] not in (2, 11) or not funcs:  # SHT_SYMTAB, SHT_DYNSYM
            continue
        strtab = secs[s[5]][3]
        for p in range(s[3], s[3] + s[4], 24):
            st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from(
                "<IBBHQQ", data, p)
            if st_info & 0xF != 2 or not st_value or not st_shndx:  # STT_FUNC, defined
                continue
            nm = data[strtab + st_name:data.index(b"\0", strtab + st_name)].decode()
            if nm not in seen and any(fnmatch.fnmatchcase(nm, f) for f in funcs):
                seen.add(nm)
                notes.append(("func", nm, st_value, 0))
    _cache[key] = (data, loads, notes)
    return data, loads, notes


def vaddr_to_off(loads, v):
    for vaddr, off, filesz in loads:
        if vaddr <= v < vaddr + filesz:
            return v - vaddr + off
    return None


def binary_mappings(pid, binary):
    """(start, end, file offset) of each mapping of binary in pid, read once per look."""
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 6 or fields[5] != binary:
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            out.append((lo, hi, int(fields[2], 16)))
    return out


def mapping_start(maps, off):
    """The address where file offset off is mapped, given binary_mappings()."""
    for lo, hi, moff in maps:
        if moff <= off < moff + (hi - lo):
            return lo + off - moff
    return None


def read_exact(mem, addr, n):
    mem.seek(addr)
    b = mem.read(n)
    if len(b) != n:  # the process is exiting: its memory is going
        raise EOFError(f"short read at {addr:#x}")
    return b


def look(pid, funcs=()):
    binary = os.readlink(f"/proc/{pid}/exe")
    data, loads, notes = elf_notes(binary, funcs)
    out = {"pid": pid, "binary": binary, "semaphores": {}, "sites": 0, "changed": []}
    maps = binary_mappings(pid, binary)
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for prov, name, pc, sema in notes:
            off = vaddr_to_off(loads, pc)
            addr = mapping_start(maps, off) if off is not None else None
            if addr is None:
                continue
            b = read_exact(mem, addr, 1)
            out["sites"] += 1
            if b != data[off:off + 1]:
                out["changed"].append(f"{addr:#x}:{b.hex()}")
            if sema:
                soff = vaddr_to_off(loads, sema)
                saddr = mapping_start(maps, soff) if soff is not None else None
                if saddr is not None:
                    v, = struct.unpack("<H", read_exact(mem, saddr, 2))
                    out["semaphores"][f"{prov}:{name}"] = v
    return out


if __name__ == "__main__":
    funcs, args = [], sys.argv[1:]
    while args and args[0] == "--func":
        funcs.append(args[1])
        args = args[2:]
    for a in args:
        try:
            print(json.dumps(look(int(a), funcs)))
        except (OSError, EOFError) as e:
            print(json.dumps({"pid": int(a), "gone": str(e)}))
