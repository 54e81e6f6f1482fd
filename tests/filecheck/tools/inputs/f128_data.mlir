%x = pd.data "x" : tensor<3xf128>
pd.fetch %x : tensor<3xf128>
