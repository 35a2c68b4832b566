module.exports = {
  displayName: 'chain-domain',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
