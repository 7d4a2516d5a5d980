0000000000009040 <(anonymous namespace)::nvtxpp_annotated_function()>:
    9040:	push   %rbp
    9041:	push   %rbx
    9042:	sub    $0x58,%rsp
    9046:	movzbl 0x36273(%rip),%eax        # 3f2c0 <guard variable for (anonymous namespace)::nvtxpp_annotated_function()::nvtxpp_site_2>
    904d:	test   %al,%al
    904f:	je     9100 <(anonymous namespace)::nvtxpp_annotated_function()+0xc0>
    9055:	cmpq   $0x0,0x257a3(%rip)        # 2e800 <nvtxGlobals_v3+0x1a0>
    905d:	je     9179 <(anonymous namespace)::nvtxpp_annotated_function()+0x139>
    9063:	mov    0x1e907(%rip),%eax        # 27970 <nvtxInitializeInjectionLibrary_v3::initFuncName+0x80>
    9069:	pxor   %xmm0,%xmm0
    906d:	movl   $0x0,0x24(%rsp)
    9075:	movups %xmm0,0x14(%rsp)
    907a:	mov    %eax,(%rsp)
    907d:	mov    0x3624c(%rip),%rax        # 3f2d0 <(anonymous namespace)::nvtxpp_annotated_function()::nvtxpp_site_2>
    9084:	movq   $0x0,0x40(%rsp)
    908d:	movb   $0x0,0x48(%rsp)
    9092:	movl   $0x3,0x20(%rsp)
    909a:	mov    %rax,0x28(%rsp)
    909f:	movups %xmm0,0x4(%rsp)
    90a4:	movaps %xmm0,0x30(%rsp)
    90a9:	movzbl 0x25a40(%rip),%eax        # 2eaf0 <nvtxpp::v0::detail::auto_color_flag()::flag>
    90b0:	test   %al,%al
    90b2:	jne    90e0 <(anonymous namespace)::nvtxpp_annotated_function()+0xa0>
    90b4:	mov    0x25745(%rip),%rax        # 2e800 <nvtxGlobals_v3+0x1a0>
    90bb:	test   %rax,%rax
    90be:	je     90c7 <(anonymous namespace)::nvtxpp_annotated_function()+0x87>
    90c0:	mov    %rsp,%rsi
    90c3:	xor    %edi,%edi
    90c5:	call   *%rax
    90c7:	mov    0x2573a(%rip),%rax        # 2e808 <nvtxGlobals_v3+0x1a8>
    90ce:	test   %rax,%rax
    90d1:	je     90d7 <(anonymous namespace)::nvtxpp_annotated_function()+0x97>
    90d3:	xor    %edi,%edi
    90d5:	call   *%rax
    90d7:	add    $0x58,%rsp
    90db:	pop    %rbx
    90dc:	pop    %rbp
    90dd:	ret
    90de:	xchg   %ax,%ax
    90e0:	mov    0x361f2(%rip),%eax        # 3f2d8 <(anonymous namespace)::nvtxpp_annotated_function()::nvtxpp_site_2+0x8>
    90e6:	movl   $0x1,0x8(%rsp)
    90ee:	movb   $0x1,0x48(%rsp)
    90f3:	mov    %eax,0xc(%rsp)
    90f7:	jmp    90b4 <(anonymous namespace)::nvtxpp_annotated_function()+0x74>
    90f9:	nopl   0x0(%rax)
    9100:	lea    0x361b9(%rip),%rbx        # 3f2c0 <guard variable for (anonymous namespace)::nvtxpp_annotated_function()::nvtxpp_site_2>
    9107:	mov    %rbx,%rdi
    910a:	call   4360 <__cxa_guard_acquire@plt>
    910f:	test   %eax,%eax
    9111:	je     9055 <(anonymous namespace)::nvtxpp_annotated_function()+0x15>
    9117:	mov    0x25712(%rip),%rax        # 2e830 <nvtxGlobals_v3+0x1d0>
    911e:	test   %rax,%rax
    9121:	je     9180 <(anonymous namespace)::nvtxpp_annotated_function()+0x140>
    9123:	lea    0x1d6a6(%rip),%rbp        # 267d0 <(anonymous namespace)::nvtxpp_annotated_function()::nvtxpp_name_2>
    912a:	xor    %edi,%edi
    912c:	mov    %rbp,%rsi
    912f:	call   *%rax
    9131:	mov    %rbp,%rdi
    9134:	mov    %rax,0x36195(%rip)        # 3f2d0 <(anonymous namespace)::nvtxpp_annotated_function()::nvtxpp_site_2>
    913b:	call   4090 <strlen@plt>
    9140:	mov    %rbp,%rsi
    9143:	mov    %rax,%rdi
    9146:	call   16e90 <nvtxpp::v0::detail::name_hash(std::basic_string_view<char, std::char_traits<char> >)>
    914b:	lea    0x1e72e(%rip),%rdx        # 27880 <nvtxpp::v0::detail::auto_palette>
    9152:	mov    %rbx,%rdi
    9155:	and    $0xf,%eax
    9158:	mov    (%rdx,%rax,4),%eax
    915b:	or     $0xff000000,%eax
    9160:	mov    %eax,0x36172(%rip)        # 3f2d8 <(anonymous namespace)::nvtxpp_annotated_function()::nvtxpp_site_2+0x8>
    9166:	call   4110 <__cxa_guard_release@plt>
    916b:	cmpq   $0x0,0x2568d(%rip)        # 2e800 <nvtxGlobals_v3+0x1a0>
    9173:	jne    9063 <(anonymous namespace)::nvtxpp_annotated_function()+0x23>
    9179:	add    $0x58,%rsp
    917d:	pop    %rbx
    917e:	pop    %rbp
    917f:	ret
    9180:	xor    %eax,%eax
    9182:	lea    0x1d647(%rip),%rbp        # 267d0 <(anonymous namespace)::nvtxpp_annotated_function()::nvtxpp_name_2>
    9189:	jmp    9131 <(anonymous namespace)::nvtxpp_annotated_function()+0xf1>
    918b:	nopl   0x0(%rax,%rax,1)

