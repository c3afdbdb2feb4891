; gamerig demo cartridge: walk the room, fetch the key, open the door, walk out.
;
; Assembled by actors/emulator/cartridge/asm.py via build.py. build.py predefines the WRAM
; addresses (W_*), tile numbers (T_*), positions (START_X, KEY_X, DOOR_X, ...) from layout.py
; and appends the TILES / TILES_END / ROOM_MAP data. One pass of `main` runs per video frame.
;
; Controls: a newly pressed direction walks one tile; holding it walks again every 8 frames
; after a 16-frame delay. Bumping the door while holding the key opens it; walking into the
; open door wins (the palette inverts and input is ignored).

rP1     equ $FF00
rLCDC   equ $FF40
rSCY    equ $FF42
rSCX    equ $FF43
rLY     equ $FF44
rBGP    equ $FF47
rIE     equ $FFFF
VRAM_MAP equ $9800
ROW_WIDTH equ 20

        org $0150
start:
        di
        ld sp, $E000
        call wait_vblank
        xor a
        ldh [rLCDC], a              ; LCD off: VRAM is free to fill
        ldh [rIE], a
        ld hl, TILES
        ld de, $8000
        ld bc, TILES_END - TILES
        call memcpy
        ld hl, VRAM_MAP             ; whole 32x32 map to floor first
        ld bc, $0400
clear_map:
        xor a
        ld [hl+], a
        dec bc
        ld a, b
        or c
        jr nz, clear_map
        call copy_room
        call init_state
        xor a
        ldh [rSCX], a
        ldh [rSCY], a
        ld a, $E4
        ldh [rBGP], a
        ld a, $91                   ; LCD on, BG on, tiles at $8000, map at $9800
        ldh [rLCDC], a

main:
        call wait_vblank
        call draw
        call animate
        ld hl, W_FRAME_LO           ; 16-bit frame counter
        inc [hl]
        jr nz, frame_done
        ld hl, W_FRAME_HI
        inc [hl]
frame_done:
        call read_joypad
        call update
        jr main

; ---- set-up ------------------------------------------------------------------------------
memcpy:                             ; copy bc (>0) bytes from hl to de
        ld a, [hl+]
        ld [de], a
        inc de
        dec bc
        ld a, b
        or c
        jr nz, memcpy
        ret

copy_room:                          ; ROOM_MAP (20x18) into the top-left of the BG map
        ld hl, ROOM_MAP
        ld de, VRAM_MAP
        ld c, 18
copy_row:
        ld b, ROW_WIDTH
copy_tile:
        ld a, [hl+]
        ld [de], a
        inc de
        dec b
        jr nz, copy_tile
        ld a, e                     ; de += 12 (32 - 20)
        add a, 12
        ld e, a
        ld a, d
        adc a, 0
        ld d, a
        dec c
        jr nz, copy_row
        ret

init_state:                         ; zero $C000-$C0FF, then the start position
        ld hl, $C000
        ld b, 0
zero_wram:
        xor a
        ld [hl+], a
        dec b
        jr nz, zero_wram
        ld a, START_X
        ld [W_PLAYER_X], a
        ld [W_OLD_X], a
        ld a, START_Y
        ld [W_PLAYER_Y], a
        ld [W_OLD_Y], a
        ld a, MAGIC
        ld [W_MAGIC], a
        ret

; ---- per frame ---------------------------------------------------------------------------
wait_vblank:                        ; return at the start of the next vertical blank
        ldh a, [rLY]
        cp 144
        jr z, wait_vblank
wait_vblank_start:
        ldh a, [rLY]
        cp 144
        jr nz, wait_vblank_start
        ret

read_joypad:                        ; W_JOY_CUR = pressed buttons (1 = pressed)
        ld a, [W_JOY_CUR]
        ld [W_JOY_PREV], a
        ld a, $20                   ; select the direction keys
        ldh [rP1], a
        ldh a, [rP1]
        ldh a, [rP1]
        cpl
        and $0F
        ld b, a
        ld a, $10                   ; select the action buttons
        ldh [rP1], a
        ldh a, [rP1]
        ldh a, [rP1]
        cpl
        and $0F
        swap a
        or b
        ld [W_JOY_CUR], a
        ld a, $30
        ldh [rP1], a
        ret

update:                             ; game logic for one frame
        ld a, [W_WON]
        or a
        ret nz
        ld a, [W_JOY_PREV]
        cpl
        ld b, a
        ld a, [W_JOY_CUR]
        and b
        and $0F                     ; directions pressed this frame
        jr nz, new_press
        ld a, [W_JOY_CUR]
        and $0F
        ret z                       ; nothing held
        ld a, [W_REPEAT]
        dec a
        ld [W_REPEAT], a
        ret nz
        ld a, 8
        ld [W_REPEAT], a
        ld a, [W_JOY_CUR]
        and $0F
        jr try_move
new_press:
        ld b, a
        ld a, 16
        ld [W_REPEAT], a
        ld a, b
try_move:                           ; a = direction bits; d,e = target x,y
        ld b, a
        ld a, [W_PLAYER_X]
        ld d, a
        ld a, [W_PLAYER_Y]
        ld e, a
        bit 0, b
        jr z, not_right
        inc d
        jr have_target
not_right:
        bit 1, b
        jr z, not_left
        dec d
        jr have_target
not_left:
        bit 2, b
        jr z, not_up
        dec e
        jr have_target
not_up:
        inc e
have_target:
        call tile_at
        cp T_FLOOR
        jr z, walk
        cp T_KEY
        jr z, walk
        cp T_DOOR
        ret nz                      ; walls and torches block
        ld a, [W_DOOR_OPEN]
        or a
        jr nz, walk_out
        ld a, [W_HAS_KEY]
        or a
        ret z                       ; locked
        ld a, 1
        ld [W_DOOR_OPEN], a
        ret
walk_out:
        call step_to
        ld a, 1
        ld [W_WON], a
        ret
walk:
        call step_to
        ld a, [W_PLAYER_X]
        cp KEY_X
        ret nz
        ld a, [W_PLAYER_Y]
        cp KEY_Y
        ret nz
        ld a, 1
        ld [W_HAS_KEY], a
        ret

step_to:                            ; move the player to d,e and remember where it was
        ld a, [W_PLAYER_X]
        ld [W_OLD_X], a
        ld a, [W_PLAYER_Y]
        ld [W_OLD_Y], a
        ld a, d
        ld [W_PLAYER_X], a
        ld a, e
        ld [W_PLAYER_Y], a
        ld hl, W_MOVES
        inc [hl]
        ret

tile_at:                            ; a = ROOM_MAP[e * 20 + d]
        ld hl, ROOM_MAP
        ld a, e
        or a
        jr z, tile_at_col
        ld b, e
tile_at_row:
        ld a, l
        add a, ROW_WIDTH
        ld l, a
        ld a, h
        adc a, 0
        ld h, a
        dec b
        jr nz, tile_at_row
tile_at_col:
        ld a, l
        add a, d
        ld l, a
        ld a, h
        adc a, 0
        ld h, a
        ld a, [hl]
        ret

vram_addr:                          ; hl = VRAM_MAP + e * 32 + d
        ld h, 0
        ld l, e
        add hl, hl
        add hl, hl
        add hl, hl
        add hl, hl
        add hl, hl
        ld a, l
        add a, d
        ld l, a
        ld a, h
        adc a, high(VRAM_MAP)
        ld h, a
        ret

draw:                               ; redraw what may have changed (runs in vertical blank)
        ld a, [W_OLD_X]
        ld d, a
        ld a, [W_OLD_Y]
        ld e, a
        call vram_addr
        ld [hl], T_FLOOR
        ld a, [W_DOOR_OPEN]
        or a
        jr z, draw_player
        ld d, DOOR_X
        ld e, DOOR_Y
        call vram_addr
        ld [hl], T_DOOR_OPEN
draw_player:
        ld a, [W_PLAYER_X]
        ld d, a
        ld a, [W_PLAYER_Y]
        ld e, a
        call vram_addr
        ld [hl], T_PLAYER
        ld a, [W_HAS_KEY]
        or a
        jr z, draw_won
        ld a, T_KEY                 ; key icon in the top wall once carried
        ld [VRAM_MAP + HUD_X], a
draw_won:
        ld a, [W_WON]
        or a
        ret z
        ld a, $1B                   ; inverted palette: you won
        ldh [rBGP], a
        ret

animate:                            ; torches flicker every 16 frames
        ld a, [W_FRAME_LO]
        and 16
        ld a, T_TORCH1
        jr z, torch_set
        ld a, T_TORCH2
torch_set:
        ld [VRAM_MAP + TORCH1_X], a
        ld [VRAM_MAP + TORCH2_X], a
        ret
